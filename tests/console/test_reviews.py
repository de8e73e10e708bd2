"""The review conversation in the console: the thread (sanitized Markdown, line anchors),
request changes, approvals shown, the answer's link, and the approvals setting."""

from __future__ import annotations

from django.test import Client
from django.urls import reverse

from skills_app.models import (
    AuditEntry,
    NotificationPreference,
    RevisionComment,
    SkillRevision,
    Workspace,
)
from tests.factories import Env, save


def url(name: str, *args: str) -> str:
    return reverse(f"console:{name}", args=args)


def test_comment_thread_on_the_review_page(
    member_client: Client, owner_client: Client, env: Env, proposal: SkillRevision
) -> None:
    comment = url("revision_comment", env.team.slug, proposal.revision_id)
    response = member_client.post(
        comment, {"body": "Why **two**? <img src=x onerror=alert(1)>", "line": "3"}, follow=True
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "<strong>two</strong>" in page
    thread = page.split('data-testid="conversation"')[1].split("</section>")[0]
    assert "<img" not in thread  # raw HTML comes out as text
    assert "&lt;img src=x onerror=alert(1)&gt;" in thread
    assert "on line 3" in page
    assert "Step one, then step two." in page  # the anchored line is quoted
    refused = member_client.post(comment, {"body": "   "}, follow=True)
    assert b"A comment needs some text." in refused.content
    assert RevisionComment.objects.filter(revision=proposal).count() == 1

    review = url("revision_action", env.team.slug, proposal.revision_id, "request_changes")
    owner_client.post(review, {"comment": "", "next": "/"})
    assert SkillRevision.objects.get(pk=proposal.pk).state == "proposed"
    owner_client.post(review, {"comment": "Say which pools."})
    assert SkillRevision.objects.get(pk=proposal.pk).state == "draft"
    assert AuditEntry.objects.filter(action="skills.revision.request_changes", via="console")

    answer = save(env.member, env.team, slug="deploy", intent="publish", instruction_body="Pools")
    answered = member_client.get(url("review", env.team.slug, answer.revision.revision_id))
    assert b'data-testid="answers-review"' in answered.content
    assert url("review", env.team.slug, proposal.revision_id).encode() in answered.content


def test_required_approvals_on_the_settings_page_and_the_review_page(
    owner_client: Client, env: Env, proposal: SkillRevision
) -> None:
    settings_url = url("settings", env.team.slug)
    form = {"form": "settings", "name": "Team", "required_approvals": "0"}
    assert owner_client.post(settings_url, form).status_code == 400
    owner_client.post(settings_url, {**form, "required_approvals": "2"})
    assert Workspace.objects.get(pk=env.team.pk).required_approvals == 2

    approve = url("revision_action", env.team.slug, proposal.revision_id, "approve")
    owner_client.post(approve)
    assert SkillRevision.objects.get(pk=proposal.pk).state == "proposed"
    page = owner_client.get(url("review", env.team.slug, proposal.revision_id)).content.decode()
    approvals = page.split('data-testid="approvals"')[1].split("</section>")[0]
    assert "2 needed" in approvals
    assert env.owner.username in approvals


def test_notifications_page_switches_e_mails_off(member_client: Client, env: Env) -> None:
    page = url("notifications", env.team.slug)
    assert b'name="comments" id="id_comments" checked' in member_client.get(page).content
    member_client.post(page, {"review_requests": "on", "review_outcomes": "on"})
    preference = NotificationPreference.objects.get(user=env.member)
    assert (preference.review_requests, preference.comments) == (True, False)
