"""The reads the console makes through selectors and ``access`` (no ORM in the door)."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest
from django.utils import timezone

from skills_app import errors
from skills_app.access import Actor, invitation_for, token_for
from skills_app.models import AuditEntry, Workspace
from skills_app.selectors.accounts import (
    AuditFilter,
    audit_entries,
    home_workspace,
    tokens_listed,
    user_memberships,
    workspace_members,
)
from skills_app.selectors.invitations import invitations_pending
from skills_app.selectors.reviews import awaiting_review, awaiting_review_count, revision_thread
from skills_app.selectors.revisions import revision_component_rows, skill_stored_component
from skills_app.services.reviews import revision_comment_add
from skills_app.services.skills import revision_transition
from tests.factories import (
    Env,
    actor_for,
    component,
    make_invitation,
    make_team,
    make_token,
    make_user,
    save,
)


def test_audit_filter_action_is_exact_or_a_dotted_prefix(env: Env) -> None:
    AuditEntry.objects.filter(workspace=env.team).delete()
    for action in ("skills.revision.approve", "skills.revisions.bulk", "skills.revision"):
        AuditEntry.objects.create(workspace=env.team, action=action)
    owner = actor_for(env.owner, via="console")

    def actions(text: str) -> set[str]:
        entries = audit_entries(actor=owner, workspace=env.team, filters=AuditFilter(action=text))
        return {entry.action for entry in entries}

    assert actions("skills.rev") == set()
    assert actions("skills.revision") == {"skills.revision", "skills.revision.approve"}
    assert actions("skills.revision.approve") == {"skills.revision.approve"}
    assert actions("  ") == {"skills.revision.approve", "skills.revisions.bulk", "skills.revision"}
    with pytest.raises(errors.ValidationFailed) as refused:
        actions("x" * 65)
    assert refused.value.details == {"field": "action"}


def test_audit_filter_days_are_inclusive_and_the_log_is_for_admins(env: Env) -> None:
    AuditEntry.objects.filter(workspace=env.team).delete()
    noon = timezone.make_aware(datetime(2026, 3, 10, 12, 0))
    for days, target in ((0, "today"), (1, "yesterday"), (2, "before")):
        entry = AuditEntry.objects.create(workspace=env.team, action="a.b", target_id=target)
        AuditEntry.objects.filter(pk=entry.pk).update(created_at=noon - timedelta(days=days))
    owner = actor_for(env.owner, via="console")
    day = date(2026, 3, 9)
    window = audit_entries(actor=owner, workspace=env.team, filters=AuditFilter(since=day))
    assert [entry.target_id for entry in window] == ["today", "yesterday"]
    window = audit_entries(
        actor=owner, workspace=env.team, filters=AuditFilter(since=day, until=day)
    )
    assert [entry.target_id for entry in window] == ["yesterday"]
    with pytest.raises(errors.PermissionDenied):
        audit_entries(actor=actor_for(env.member), workspace=env.team)
    with pytest.raises(errors.NotFound):
        audit_entries(actor=actor_for(env.outsider), workspace=env.team)


def test_home_workspace_prefers_the_last_then_personal_then_any(env: Env) -> None:
    actor = Actor(user=env.admin)
    personal = Workspace.objects.get(slug=env.admin.username)
    assert home_workspace(actor=actor, last_slug=env.team.slug) == env.team
    assert home_workspace(actor=actor, last_slug=None) == personal
    # A slug the person no longer reads is ignored, like a missing one.
    elsewhere = make_team(env.outsider)
    assert home_workspace(actor=actor, last_slug=elsewhere.slug) == personal
    personal.delete()
    assert home_workspace(actor=actor, last_slug="gone") == env.team
    assert home_workspace(actor=Actor(user=None)) is None


def test_user_memberships_put_personal_first_and_members_are_by_name(env: Env) -> None:
    actor = Actor(user=env.owner)
    second = make_team(env.owner, slug="aaa-team")
    rows = user_memberships(actor=actor)
    assert [m.workspace.slug for m in rows] == [
        env.owner.username,
        *sorted([env.team.slug, second.slug]),
    ]
    assert user_memberships(actor=Actor(user=None)) == []
    names = [m.user.username for m in workspace_members(actor=actor, workspace=env.team)]
    assert names == sorted(names)
    assert len(names) == 4
    with pytest.raises(errors.NotFound):
        workspace_members(actor=Actor(user=env.outsider), workspace=env.team)


def test_tokens_listed_keeps_people_and_teams_apart(env: Env) -> None:
    mine, _ = make_token(env.admin, name="mine")
    team_token, _ = make_token(env.admin, name="team", workspace=env.team, role="member")
    admin = Actor(user=env.admin)
    assert list(tokens_listed(actor=admin)) == [mine]
    assert list(tokens_listed(actor=admin, workspace=env.team)) == [team_token]
    with pytest.raises(errors.PermissionDenied):
        tokens_listed(actor=Actor(user=env.member), workspace=env.team)
    # token_for (access) reaches both for an admin, neither for a member.
    assert token_for(admin, team_token.token_id) == team_token
    with pytest.raises(errors.NotFound):
        token_for(Actor(user=env.member), team_token.token_id)
    with pytest.raises(errors.NotFound):
        token_for(Actor(user=env.member), mine.token_id)


def test_pending_invitations_are_newest_first_and_for_admins(env: Env) -> None:
    first = make_invitation(env.owner, env.team, email="a@example.com")
    second = make_invitation(env.owner, env.team, email="b@example.com")
    admin = Actor(user=env.admin)
    assert list(invitations_pending(actor=admin, workspace=env.team)) == [second, first]
    with pytest.raises(errors.PermissionDenied):
        invitations_pending(actor=Actor(user=env.member), workspace=env.team)
    found = invitation_for(actor=admin, workspace=env.team, invitation_id=first.invitation_id)
    assert found == first
    with pytest.raises(errors.NotFound):
        invitation_for(actor=admin, workspace=env.personal, invitation_id=first.invitation_id)


def test_review_queue_and_thread(env: Env) -> None:
    proposed = save(env.member, env.team, slug="one", intent="publish").revision
    save(env.member, env.team, slug="two")  # a draft waits for nobody
    owner = Actor(user=env.owner)
    assert awaiting_review(actor=owner, workspace=env.team) == [proposed]
    assert awaiting_review_count(actor=owner, workspace=env.team) == 1
    assert awaiting_review_count(actor=Actor(user=env.outsider), workspace=env.team) == 0
    revision_comment_add(actor=owner, revision=proposed, body="first", line=None)
    revision_comment_add(actor=Actor(user=env.member), revision=proposed, body="second", line=1)
    assert [c.body for c in revision_thread(revision=proposed)] == ["first", "second"]
    revision_transition(actor=owner, revision=proposed, action="approve")
    assert awaiting_review_count(actor=owner, workspace=env.team) == 0
    env.team.cloud_skills_enabled = False
    assert awaiting_review_count(actor=owner, workspace=env.team) == 0


def test_component_rows_and_stored_bytes_stay_within_one_skill(env: Env) -> None:
    owner = make_user()
    team = make_team(owner)
    parts = (component("b.md", "bee"), component("a.md", "ay"))
    revision = save(owner, team, slug="mine", components=parts).revision
    other = save(owner, team, slug="other", components=(component("c.md", "secret"),)).revision
    rows = revision_component_rows(revision=revision)
    assert [(row.logical_path, bytes(row.blob.data)) for row in rows] == [
        ("a.md", b"ay"),
        ("b.md", b"bee"),
    ]
    stored = skill_stored_component(skill=revision.skill, content_hash=rows[0].content_hash)
    assert stored is not None
    assert bytes(stored.blob.data) == b"ay"
    foreign = revision_component_rows(revision=other)[0].content_hash
    assert skill_stored_component(skill=revision.skill, content_hash=foreign) is None
