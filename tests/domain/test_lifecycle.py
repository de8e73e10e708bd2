"""The lifecycle table of docs/contract.md §4: every row, every role, every forbidden move."""

from __future__ import annotations

import itertools

import pytest

from skills_app.domain import lifecycle
from skills_app.domain.lifecycle import (
    ACTIONS,
    REVISION_ACTIONS,
    STATES,
    actions_available,
    check_skill_status,
    check_transition,
    require_comment,
    skill_actions_available,
    transition_for,
)
from skills_app.errors import InvalidTransition, PermissionDenied, ValidationFailed, XmemoError
from skills_app.models import Membership, Skill, SkillRevision

ROLES = (None, "owner", "admin", "member")
ALL_STATES = (None, *STATES)  # None: the revision is new (a save)


def allowed(action: str, kind: str, role: str | None, is_author: bool, distinct: bool) -> bool:
    """Who may act, transcribed from the docs/contract.md §4 table (independently of the module's
    table)."""
    if role is None:
        return False
    if kind == "personal":
        return role == "owner"
    return {
        "save_draft": True,
        "save_publish": True,
        "propose": is_author or role in ("admin", "owner"),
        "withdraw": is_author,
        "approve": role in ("admin", "owner") and not (distinct and is_author),
        "reject": role in ("admin", "owner"),
        "request_changes": role in ("admin", "owner"),
        "deprecate": role in ("admin", "owner"),
        "restore": True,
    }[action]


# action → (from states, to state in personal, to state in team); None: not in that kind.
CONTRACT_TABLE: dict[str, tuple[set[str | None], str | None, str | None]] = {
    "save_draft": ({None}, "draft", "draft"),
    "save_publish": ({None}, "published", "proposed"),
    "propose": ({"draft"}, None, "proposed"),
    "withdraw": ({"proposed"}, None, "draft"),
    "approve": ({"proposed"}, None, "published"),
    "reject": ({"proposed"}, None, "draft"),
    "request_changes": ({"proposed"}, None, "draft"),  # docs/contract.md §16
    "publish": ({"draft"}, "published", None),
    "deprecate": ({"draft", "published"}, "deprecated", "deprecated"),
    "restore": (set(STATES), "published", "proposed"),
}


def expected_outcome(
    action: str, state: str | None, kind: str, role: str | None, is_author: bool, distinct: bool
) -> str | type[XmemoError]:
    from_states, to_personal, to_team = CONTRACT_TABLE[action]
    target = to_personal if kind == "personal" else to_team
    if target is None or state not in from_states:
        return InvalidTransition
    if not allowed(action, kind, role, is_author, distinct):
        return PermissionDenied
    return target


MATRIX = list(
    itertools.product(
        ACTIONS, ALL_STATES, ("personal", "team"), ROLES, (False, True), (False, True)
    )
)


def test_the_table_covers_exactly_the_spec_actions() -> None:
    assert set(ACTIONS) == set(CONTRACT_TABLE)
    assert set(REVISION_ACTIONS) == set(CONTRACT_TABLE) - {"save_draft", "save_publish"}


def outcome(
    action: str, state: str | None, kind: str, role: str | None, is_author: bool, distinct: bool
) -> str | tuple[type[XmemoError], dict]:
    """What ``check_transition`` answers: the target state, or the error's class and details."""
    try:
        return check_transition(
            action=action,
            state=state,
            workspace_kind=kind,
            role=role,
            is_author=is_author,
            require_distinct_reviewer=distinct,
            comment="a reason for the author",  # the comment rule has its own test below
        )
    except XmemoError as exc:
        return type(exc), exc.details


def test_every_move_matches_the_spec() -> None:
    """Every move (action, state, workspace kind, role, authorship, distinct-reviewer setting:
    1,600 in all) against the table transcribed above, in one test that lists every move that
    differs. (They were 1,600 test ids, whose setup cost more than the checks.)"""
    wrong = []
    for move in MATRIX:
        action, state = move[:2]
        target = expected_outcome(*move)
        expected = (
            target if isinstance(target, str) else (target, {"action": action, "state": state})
        )
        got = outcome(*move)
        # PermissionDenied also names the role; the move and state are what every refusal says.
        if not isinstance(got, str):
            got = (got[0], {k: v for k, v in got[1].items() if k in ("action", "state")})
        if got != expected:
            wrong.append(f"{move}: expected {expected}, got {got}")
    assert not wrong, f"{len(wrong)} moves differ from the spec:\n" + "\n".join(wrong[:40])


# Spot checks that read like the contract's table, so a reviewer can see the rules at a glance.
@pytest.mark.parametrize(
    ("action", "state", "kind", "role", "is_author", "target"),
    [
        ("save_draft", None, "personal", "owner", True, "draft"),
        ("save_publish", None, "personal", "owner", True, "published"),
        ("save_publish", None, "team", "member", True, "proposed"),
        ("propose", "draft", "team", "member", True, "proposed"),
        ("propose", "draft", "team", "admin", False, "proposed"),
        ("withdraw", "proposed", "team", "member", True, "draft"),
        ("approve", "proposed", "team", "admin", False, "published"),
        ("approve", "proposed", "team", "owner", True, "published"),
        ("reject", "proposed", "team", "owner", False, "draft"),
        ("publish", "draft", "personal", "owner", True, "published"),
        ("deprecate", "published", "personal", "owner", True, "deprecated"),
        ("deprecate", "draft", "team", "admin", False, "deprecated"),
        ("restore", "deprecated", "personal", "owner", False, "published"),
        ("restore", "published", "team", "member", False, "proposed"),
    ],
)
def test_allowed_moves(
    action: str, state: str, kind: str, role: str, is_author: bool, target: str
) -> None:
    result = check_transition(
        action=action,
        state=state,
        workspace_kind=kind,
        role=role,
        is_author=is_author,
        comment="a reason",
    )
    assert result == target


@pytest.mark.parametrize(
    ("action", "state", "kind", "role", "is_author", "error"),
    [
        ("propose", "draft", "team", "member", False, PermissionDenied),
        ("withdraw", "proposed", "team", "owner", False, PermissionDenied),
        ("approve", "proposed", "team", "member", False, PermissionDenied),
        ("reject", "proposed", "team", "member", True, PermissionDenied),
        ("deprecate", "published", "team", "member", True, PermissionDenied),
        ("save_draft", None, "team", None, False, PermissionDenied),
        ("propose", "draft", "personal", "owner", True, InvalidTransition),
        ("approve", "proposed", "personal", "owner", True, InvalidTransition),
        ("publish", "draft", "team", "owner", True, InvalidTransition),
        ("publish", "published", "personal", "owner", True, InvalidTransition),
        ("deprecate", "deprecated", "personal", "owner", True, InvalidTransition),
        ("deprecate", "proposed", "team", "owner", True, InvalidTransition),
        ("approve", "draft", "team", "owner", False, InvalidTransition),
        ("save_draft", "draft", "team", "owner", False, InvalidTransition),
        ("restore", None, "team", "owner", False, InvalidTransition),
        ("archive", "draft", "team", "owner", False, InvalidTransition),
    ],
)
def test_forbidden_moves(
    action: str, state: str | None, kind: str, role: str, is_author: bool, error: type
) -> None:
    with pytest.raises(error):
        check_transition(
            action=action, state=state, workspace_kind=kind, role=role, is_author=is_author
        )


def test_distinct_reviewer_bars_only_the_author_from_approving() -> None:
    common = {"action": "approve", "state": "proposed", "workspace_kind": "team", "role": "owner"}
    with pytest.raises(PermissionDenied) as caught:
        check_transition(**common, is_author=True, require_distinct_reviewer=True)
    assert "other than the author" in caught.value.message
    assert check_transition(**common, is_author=False, require_distinct_reviewer=True) == (
        "published"
    )


def test_state_is_checked_before_role() -> None:
    # a member (who may not approve) pressing approve on a published revision learns the state
    with pytest.raises(InvalidTransition):
        check_transition(
            action="approve",
            state="published",
            workspace_kind="team",
            role="member",
            is_author=False,
        )


def test_messages_say_what_to_do() -> None:
    with pytest.raises(InvalidTransition) as in_team:
        check_transition(
            action="publish", state="draft", workspace_kind="team", role="owner", is_author=True
        )
    assert "propose" in in_team.value.message
    with pytest.raises(PermissionDenied) as denied:
        check_transition(
            action="approve",
            state="proposed",
            workspace_kind="team",
            role="member",
            is_author=False,
        )
    assert "the owner or an admin" in denied.value.message
    assert denied.value.details == {"action": "approve", "state": "proposed", "role": "member"}


def test_unknown_workspace_kind_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="workspace kind"):
        check_transition(
            action="publish", state="draft", workspace_kind="org", role="owner", is_author=True
        )


def test_require_comment() -> None:
    assert require_comment("reject") is True
    assert require_comment("request_changes") is True
    assert [a for a in ACTIONS if require_comment(a)] == ["reject", "request_changes"]


@pytest.mark.parametrize(
    ("state", "kind", "role", "is_author", "distinct", "expected"),
    [
        ("draft", "personal", "owner", True, False, ["publish", "deprecate", "restore"]),
        ("published", "personal", "owner", True, False, ["deprecate", "restore"]),
        (
            "proposed",
            "team",
            "admin",
            False,
            False,
            ["approve", "reject", "request_changes", "restore"],
        ),
        (
            "proposed",
            "team",
            "admin",
            True,
            False,
            ["withdraw", "approve", "reject", "request_changes", "restore"],
        ),
        (
            "proposed",
            "team",
            "admin",
            True,
            True,
            ["withdraw", "reject", "request_changes", "restore"],
        ),
        ("proposed", "team", "member", True, False, ["withdraw", "restore"]),
        ("draft", "team", "member", False, False, ["restore"]),
        ("draft", "team", "member", True, False, ["propose", "restore"]),
        ("deprecated", "team", "owner", False, False, ["restore"]),
        (None, "team", "member", False, False, ["save_draft", "save_publish"]),
        ("draft", "team", None, True, False, []),
    ],
)
def test_actions_available(
    state: str | None,
    kind: str,
    role: str | None,
    is_author: bool,
    distinct: bool,
    expected: list[str],
) -> None:
    assert (
        actions_available(
            state=state,
            workspace_kind=kind,
            role=role,
            is_author=is_author,
            require_distinct_reviewer=distinct,
        )
        == expected
    )


def test_a_revision_row_offers_decisions_as_a_review_link_and_no_restore_of_the_latest() -> None:
    def buttons(state: str, *, is_latest: bool) -> lifecycle.RevisionButtons:
        return lifecycle.revision_buttons(
            state=state, workspace_kind="team", role="owner", is_author=False, is_latest=is_latest
        )

    proposed = buttons("proposed", is_latest=True)
    assert proposed.reviewable
    assert {"approve", "reject", "request_changes"} == lifecycle.REVIEW_DECISIONS
    assert not lifecycle.REVIEW_DECISIONS & set(proposed.actions)
    assert "restore" in buttons("deprecated", is_latest=False).actions
    assert "restore" not in buttons("deprecated", is_latest=True).actions
    assert not buttons("published", is_latest=True).reviewable


def test_actions_available_agrees_with_check_transition() -> None:
    """In every situation (state, kind, role, authorship, distinct reviewer: 160 in all), the
    actions offered are exactly those the table allows."""
    wrong = []
    for state, kind, role, is_author, distinct in itertools.product(
        ALL_STATES, ("personal", "team"), ROLES, (False, True), (False, True)
    ):
        available = actions_available(
            state=state,
            workspace_kind=kind,
            role=role,
            is_author=is_author,
            require_distinct_reviewer=distinct,
        )
        allowed_here = [
            action
            for action in ACTIONS
            if isinstance(expected_outcome(action, state, kind, role, is_author, distinct), str)
        ]
        if sorted(available) != sorted(allowed_here):
            wrong.append(
                f"{(state, kind, role, is_author, distinct)}: {available} != {allowed_here}"
            )
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("comment", ["", "   "])
def test_a_rejection_without_a_comment_is_refused_after_the_state_and_role_checks(
    comment: str,
) -> None:
    def reject(state: str, role: str, text: str) -> str:
        return check_transition(
            action="reject",
            state=state,
            workspace_kind="team",
            role=role,
            is_author=False,
            comment=text,
        )

    with pytest.raises(InvalidTransition):  # the state first …
        reject("draft", "admin", comment)
    with pytest.raises(PermissionDenied):  # … then the role …
        reject("proposed", "member", comment)
    with pytest.raises(ValidationFailed) as missing:  # … then the comment
        reject("proposed", "admin", comment)
    assert missing.value.details == {"field": "comment"}
    assert missing.value.message == "A rejection needs a comment for the author."
    assert reject("proposed", "admin", "why") == "draft"


# action → the token scope it needs (docs/contract.md §2), transcribed independently of the module's
# table.
SCOPE_TABLE = {
    "save_draft": "skills:write",
    "save_publish": "skills:write",
    "propose": "skills:write",
    "withdraw": "skills:write",
    "restore": "skills:write",
    "approve": "skills:review",
    "reject": "skills:review",
    "request_changes": "skills:review",
    "publish": "skills:review",
    "deprecate": "skills:review",
}


@pytest.mark.parametrize("action", ACTIONS)
def test_every_action_names_its_scope(action: str) -> None:
    assert transition_for(action).scope == SCOPE_TABLE[action]
    decisions = ("approve", "reject", "request_changes")
    assert transition_for(action).review_decision is (action in decisions)


@pytest.mark.parametrize("action", ["save_draft", "save_publish", "restore", "nope"])
def test_only_moves_of_an_existing_revision_are_moves(action: str) -> None:
    with pytest.raises(InvalidTransition) as refused:
        transition_for(action, moves_only=True)
    assert refused.value.details == {"action": action}
    assert "propose" in refused.value.message


def test_publish_action_per_workspace_kind() -> None:
    assert lifecycle.publish_action("personal") == "publish"
    assert lifecycle.publish_action("team") == "propose"


def test_the_models_store_the_tables_states_roles_and_statuses() -> None:
    assert tuple(SkillRevision.State.values) == lifecycle.STATES
    assert tuple(Membership.Role.values) == lifecycle.ROLES
    assert tuple(Skill.Status.values) == lifecycle.SKILL_STATUSES


# (action, status) → allowed for owner/admin; members never.
SKILL_TABLE = {
    ("archive", "active"): "archived",
    ("archive", "archived"): "archived",
    ("unarchive", "archived"): "active",
    ("unarchive", "active"): "active",
    ("delete", "archived"): None,
}


@pytest.mark.parametrize(
    ("action", "status"),
    list(itertools.product(("archive", "unarchive", "delete"), ("active", "archived"))),
)
def test_skill_actions_match_the_table(action: str, status: str) -> None:
    if (action, status) in SKILL_TABLE:
        assert check_skill_status(action=action, status=status) == SKILL_TABLE[action, status]
    else:
        with pytest.raises(InvalidTransition) as refused:
            check_skill_status(action=action, status=status)
        assert refused.value.message == "Archive the skill before deleting it for good."
    assert lifecycle.skill_action(action).roles == ("owner", "admin")
    assert lifecycle.skill_action(action).scope == "skills:write"
    for role in ("owner", "admin", "member", None):
        available = skill_actions_available(status=status, role=role)
        assert (action in available) is (
            role in ("owner", "admin") and (action, status) in SKILL_TABLE
        )
