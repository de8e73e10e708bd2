"""Every lifecycle row of docs/contract.md §4, through the services, for each workspace kind and
role.

The expectations are written out from the table of docs/contract.md §4 here, independently of
``domain/lifecycle.py``, so a wrong table entry fails these tests.
"""

from __future__ import annotations

import pytest

from skills_app import errors
from skills_app.models import AuditEntry, SkillRevision, Workspace
from skills_app.services.accounts import workspace_create
from skills_app.services.skills import revision_restore, revision_transition
from skills_app.services.workspace_settings import workspace_settings_update
from tests.factories import Env, actor_for, save

OK = "ok"
PERM = "PERMISSION_DENIED"
INVALID = "INVALID_TRANSITION"


def _revision_in_state(env: Env, state: str, *, author_role: str = "member") -> SkillRevision:
    """A team revision authored by ``author_role``'s user, moved to ``state``."""
    author = env.role_user(author_role)
    rev = save(author, env.team, slug=f"s-{state}").revision
    owner = actor_for(env.owner)
    if state in ("proposed", "published", "deprecated"):
        revision_transition(actor=actor_for(author), revision=rev, action="propose")
    if state in ("published", "deprecated"):
        revision_transition(actor=owner, revision=rev, action="approve")
    if state == "deprecated":
        revision_transition(actor=owner, revision=rev, action="deprecate")
    rev.refresh_from_db()
    assert rev.state == state
    return rev


TEAM_CASES = [
    # action, from state, who acts ("author" = the member who wrote it), expected, to state
    ("propose", "draft", "author", OK, "proposed"),
    ("propose", "draft", "admin", OK, "proposed"),
    ("propose", "draft", "owner", OK, "proposed"),
    ("propose", "draft", "member2", PERM, None),
    ("propose", "published", "owner", INVALID, None),
    ("withdraw", "proposed", "author", OK, "draft"),
    ("withdraw", "proposed", "admin", PERM, None),
    ("withdraw", "proposed", "owner", PERM, None),
    ("withdraw", "draft", "author", INVALID, None),
    ("approve", "proposed", "admin", OK, "published"),
    ("approve", "proposed", "owner", OK, "published"),
    ("approve", "proposed", "author", PERM, None),
    ("approve", "proposed", "member2", PERM, None),
    ("approve", "draft", "owner", INVALID, None),
    ("reject", "proposed", "admin", OK, "draft"),
    ("reject", "proposed", "owner", OK, "draft"),
    ("reject", "proposed", "member2", PERM, None),
    ("reject", "draft", "owner", INVALID, None),
    ("publish", "draft", "owner", INVALID, None),
    ("publish", "draft", "admin", INVALID, None),
    ("deprecate", "published", "owner", OK, "deprecated"),
    ("deprecate", "published", "admin", OK, "deprecated"),
    ("deprecate", "draft", "admin", OK, "deprecated"),
    ("deprecate", "published", "author", PERM, None),
    ("deprecate", "proposed", "owner", INVALID, None),
    ("deprecate", "deprecated", "owner", INVALID, None),
]


@pytest.mark.parametrize(("action", "state", "who", "expected", "to_state"), TEAM_CASES)
def test_team_lifecycle(
    env: Env, action: str, state: str, who: str, expected: str, to_state: str | None
) -> None:
    rev = _revision_in_state(env, state)
    user = {"author": env.member, "member2": env.member2, "admin": env.admin, "owner": env.owner}[
        who
    ]
    before = AuditEntry.objects.count()
    if expected == OK:
        result = revision_transition(
            actor=actor_for(user), revision=rev, action=action, comment="needs work"
        )
        assert result.state == to_state
        rev.refresh_from_db()
        assert rev.state == to_state
        assert AuditEntry.objects.filter(
            action=f"skills.revision.{action}", target_id=rev.revision_id
        ).exists()
    else:
        with pytest.raises(errors.XmemoError) as excinfo:
            revision_transition(
                actor=actor_for(user), revision=rev, action=action, comment="needs work"
            )
        assert excinfo.value.code == expected
        rev.refresh_from_db()
        assert rev.state == state
        assert AuditEntry.objects.count() == before


def test_reject_needs_a_comment(env: Env) -> None:
    rev = _revision_in_state(env, "proposed")
    with pytest.raises(errors.ValidationFailed):
        revision_transition(actor=actor_for(env.owner), revision=rev, action="reject", comment="  ")
    rev.refresh_from_db()
    assert rev.state == "proposed"


def test_distinct_reviewer_blocks_self_approval(env: Env) -> None:
    env.team.require_distinct_reviewer = True
    env.team.save()
    rev = _revision_in_state(env, "proposed", author_role="admin")
    with pytest.raises(errors.PermissionDenied):
        revision_transition(actor=actor_for(env.admin), revision=rev, action="approve")
    assert (
        revision_transition(actor=actor_for(env.owner), revision=rev, action="approve").state
        == "published"
    )


def test_a_new_team_requires_a_reviewer_other_than_the_author(env: Env) -> None:
    """Issue 25 #17 / contract §16: the README promised authors never approve their own
    proposals, yet a new team let them. The team made through the service starts with the
    rule on, and its owner cannot approve their own proposal."""
    team = workspace_create(actor=actor_for(env.owner), slug="fresh-team", name="Fresh")
    assert Workspace.objects.get(pk=team.pk).require_distinct_reviewer is True
    rev = save(env.owner, team, slug="mine", intent="publish").revision
    with pytest.raises(errors.PermissionDenied):
        revision_transition(actor=actor_for(env.owner), revision=rev, action="approve")
    assert SkillRevision.objects.get(pk=rev.pk).state == "proposed"


def test_without_distinct_reviewer_an_admin_may_approve_their_own(env: Env) -> None:
    workspace_settings_update(
        actor=actor_for(env.owner), workspace=env.team, require_distinct_reviewer=False
    )
    switched = AuditEntry.objects.get(action="workspace.settings.change")
    assert switched.data == {"require_distinct_reviewer": {"from": True, "to": False}}
    rev = _revision_in_state(env, "proposed", author_role="admin")
    assert (
        revision_transition(actor=actor_for(env.admin), revision=rev, action="approve").state
        == "published"
    )


@pytest.mark.parametrize("role", ["owner", "admin", "member"])
def test_team_save_intents_for_every_role(env: Env, role: str) -> None:
    user = env.role_user(role)
    assert save(user, env.team, slug="d", intent="draft").revision.state == "draft"
    assert save(user, env.team, slug="p", intent="publish").revision.state == "proposed"


@pytest.mark.parametrize("role", ["owner", "admin", "member"])
def test_team_restore_proposes_for_every_role(env: Env, role: str) -> None:
    first = save(env.owner, env.team, slug="r").revision
    save(env.owner, env.team, slug="r", instruction_body="changed")
    restored = revision_restore(actor=actor_for(env.role_user(role)), revision=first)
    assert restored.created
    assert restored.revision.state == "proposed"
    assert restored.revision.revision_number == 3
    assert restored.revision.canonical_hash == first.canonical_hash
    assert restored.revision.source == "restore"


PERSONAL_CASES = [
    ("publish", "draft", OK, "published"),
    ("deprecate", "draft", OK, "deprecated"),
    ("deprecate", "published", OK, "deprecated"),
    ("publish", "published", INVALID, None),
    ("publish", "deprecated", INVALID, None),
    ("propose", "draft", INVALID, None),
    ("withdraw", "draft", INVALID, None),
    ("approve", "draft", INVALID, None),
    ("reject", "draft", INVALID, None),
]


@pytest.mark.parametrize(("action", "state", "expected", "to_state"), PERSONAL_CASES)
def test_personal_lifecycle(
    env: Env, action: str, state: str, expected: str, to_state: str | None
) -> None:
    owner = actor_for(env.owner)
    rev = save(env.owner, env.personal, slug="p").revision
    if state in ("published", "deprecated"):
        revision_transition(actor=owner, revision=rev, action="publish")
    if state == "deprecated":
        revision_transition(actor=owner, revision=rev, action="deprecate")
    if expected == OK:
        assert (
            revision_transition(actor=owner, revision=rev, action=action, comment="x").state
            == to_state
        )
    else:
        with pytest.raises(errors.XmemoError) as excinfo:
            revision_transition(actor=owner, revision=rev, action=action, comment="x")
        assert excinfo.value.code == expected
        rev.refresh_from_db()
        assert rev.state == state


def test_personal_save_publish_publishes_and_restore_publishes(env: Env) -> None:
    first = save(env.owner, env.personal, intent="publish").revision
    assert first.state == "published"
    second = save(env.owner, env.personal, intent="publish", instruction_body="v2").revision
    first.refresh_from_db()
    assert (first.state, second.state) == ("deprecated", "published")
    superseded = AuditEntry.objects.get(
        action="skills.revision.deprecate", target_id=first.revision_id
    )
    assert superseded.data["superseded_by"] == second.revision_id
    restored = revision_restore(actor=actor_for(env.owner), revision=first).revision
    second.refresh_from_db()
    assert (restored.state, second.state) == ("published", "deprecated")


def test_strangers_get_not_found_not_forbidden(env: Env) -> None:
    rev = save(env.owner, env.team).revision
    with pytest.raises(errors.NotFound):
        revision_transition(actor=actor_for(env.outsider), revision=rev, action="propose")
    with pytest.raises(errors.NotFound):
        save(env.outsider, env.personal)
    with pytest.raises(errors.NotFound):
        save(env.member, env.personal)
