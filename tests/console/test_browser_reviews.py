"""The review conversation in real headless Chromium: a member proposes, the owner is e-mailed
(Django's in-memory outbox, shared with the live server's thread), comments on a line of the
diff and requests changes, the author revises (the new revision links to the thread), two
admins approve under a two-approval rule, and Level 1 serves the result."""

from __future__ import annotations

import json
import re
import urllib.request
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core import mail
from playwright.sync_api import expect

from skills_app.models import (
    Membership,
    RevisionApproval,
    RevisionComment,
    Skill,
    SkillRevision,
    Workspace,
)
from tests.console.test_browser import _user, _write_skill, browser, sign_in
from tests.factories import make_team, make_token

pytestmark = [pytest.mark.browser, pytest.mark.services]
__all__ = ["browser", "sign_in"]  # fixtures this module uses


@pytest.fixture
def review_team(transactional_db: None) -> dict[str, Any]:
    owner, admin, admin2, author = _user("olive"), _user("adam"), _user("ada"), _user("ana")
    for user in (owner, admin, admin2, author):
        user.email = f"{user.username}@example.test"
        user.save(update_fields=["email"])
    workspace = make_team(
        owner, slug="acme", members={admin: "admin", admin2: "admin", author: "member"}
    )
    return {"ws": workspace, "owner": owner, "admin": admin, "admin2": admin2, "author": author}


def review_conversation(
    sign_in: Any, base_url: str, *, ws: str, owner: User, author: User, approvers: list[User]
) -> SkillRevision:
    """The whole conversation in the browser, with a two-approval rule the owner sets: the author
    proposes, every admin is e-mailed, the owner comments on a line of the diff and requests
    changes, the author revises, ``approvers`` approve in turn, and Level 1 serves the result.
    Returns the published revision."""
    reviewers = {
        m.user.email
        for m in Membership.objects.filter(
            workspace__slug=ws, role__in=["owner", "admin"]
        ).select_related("user")
    }
    mail.outbox.clear()

    owner_session = sign_in(owner)
    page = owner_session.page
    page.goto(f"/w/{ws}/settings/")
    page.fill("#id_required_approvals", "2")
    page.get_by_role("button", name="Save settings").click()
    expect(page.locator(".flash")).to_contain_text("Settings saved")
    assert Workspace.objects.get(slug=ws).required_approvals == 2

    author_session = sign_in(author)
    page = author_session.page
    page.goto(f"/w/{ws}/skills/new/")
    body = "# Release\n\n1. Run the tests.\n2. Tag the build.\n"
    _write_skill(page, slug="release", body=body, component=None)
    page.get_by_test_id("save-publish").click()
    expect(page.locator(".flash")).to_contain_text("Revision #1 proposed for review")
    first = SkillRevision.objects.get(revision_number=1, skill__workspace__slug=ws)
    assert first.state == "proposed"
    assert first.author == author

    told = {m.to[0]: m for m in mail.outbox}
    assert set(told) == reviewers
    review_link = re.search(r"https?://\S+/review/", str(told[owner.email].body))
    assert review_link is not None
    assert review_link.group(0).endswith(f"/w/{ws}/revisions/{first.revision_id}/review/")
    mail.outbox.clear()

    page = owner_session.page
    page.goto(f"/w/{ws}/revisions/{first.revision_id}/review/")
    expect(page.get_by_test_id("approvals")).to_contain_text("2 needed")
    page.select_option("#id_line", "4")
    page.fill("#id_body", "Which **tag** format?")
    page.get_by_test_id("add-comment").click()
    expect(page.locator(".flash")).to_contain_text("Comment added")
    thread = page.get_by_test_id("conversation")
    expect(thread).to_contain_text("on line 4")
    expect(thread.locator("strong")).to_have_text("tag")
    # Requesting changes without a comment is refused and changes nothing.
    page.get_by_test_id("request-changes").click()
    expect(page.locator(".flash")).to_contain_text("needs a comment")
    assert SkillRevision.objects.get(pk=first.pk).state == "proposed"
    page.fill("#id_comment", "Say which tag format: v1.2.3.")
    page.get_by_test_id("request-changes").click()
    expect(page.locator(".flash")).to_contain_text("returned to its author")
    assert SkillRevision.objects.get(pk=first.pk).state == "draft"
    assert [m.subject.split(":")[0] for m in mail.outbox] == ["New comment", "Changes requested"]
    assert {m.to[0] for m in mail.outbox} == {author.email}
    assert list(RevisionComment.objects.filter(revision=first).values_list("author", "line")) == [
        (owner.pk, 4),
        (owner.pk, None),
    ]
    mail.outbox.clear()

    page = author_session.page
    skill = Skill.objects.get(slug="release", workspace__slug=ws)
    page.goto(f"/w/{ws}/skills/{skill.skill_id}/")
    page.get_by_role("link", name="New revision").click()
    page.fill("#id_instruction_body", body.replace("Tag the build.", "Tag the build as v1.2.3."))
    page.get_by_test_id("save-publish").click()
    expect(page.locator(".flash")).to_contain_text("Revision #2 proposed for review")
    second = SkillRevision.objects.get(revision_number=2, skill=skill)
    assert second.answers_revision_id == first.pk
    assert [m.subject.split(":")[0] for m in mail.outbox] == ["Review requested"] * len(reviewers)
    mail.outbox.clear()

    for reviewer in approvers:
        page = sign_in(reviewer).page
        page.goto(f"/w/{ws}/revisions/{second.revision_id}/review/")
        expect(page.get_by_test_id("answers-review")).to_contain_text("revision #1")
        page.get_by_test_id("approve").click()
        if reviewer == approvers[0]:
            expect(page.locator(".flash")).to_contain_text("Approval recorded")
            assert SkillRevision.objects.get(pk=second.pk).state == "proposed"
        else:
            expect(page.locator(".flash")).to_contain_text("approved and published")
    assert SkillRevision.objects.get(pk=second.pk).state == "published"
    assert [a.user for a in RevisionApproval.objects.filter(revision=second)] == approvers
    assert sorted(m.subject.split(":")[0] for m in mail.outbox) == [
        "Approved (1 of 2)",
        "Approved and published",
    ]
    assert owner_session.dialogs == author_session.dialogs == []

    _, secret = make_token(author, scopes=["skills:read"])
    request = urllib.request.Request(
        f"{base_url}/v1/recall?slug={ws}/release",
        headers={"Authorization": f"Bearer {secret}"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        answer = json.load(response)
    assert answer["data"]["revision_id"] == second.revision_id
    assert answer["data"]["state"] == "published"
    assert "v1.2.3" in answer["data"]["instruction_body"]
    return second


def test_comment_request_changes_revise_and_two_approvals(
    sign_in: Any, review_team: dict[str, Any], live_server: Any
) -> None:
    team = review_team
    review_conversation(
        sign_in,
        live_server.url,
        ws=team["ws"].slug,
        owner=team["owner"],
        author=team["author"],
        approvers=[team["admin"], team["admin2"]],
    )
