"""The revision lifecycle of docs/contract.md §4 as one table, ``TRANSITIONS``.

Services call ``check_transition`` (under ``select_for_update``), the console asks
``actions_available``; neither re-states a rule. Checks run in one order so every caller gives
the same error: an action the workspace kind lacks, then a state that is no from-state
(``InvalidTransition``), then role, authorship or the distinct-reviewer rule
(``PermissionDenied``). State before role: "already published" is the useful answer to a stale
button, whoever pressed it. Non-members never get here: ``access`` answers 404 first."""

from __future__ import annotations

from dataclasses import dataclass

from skills_app.errors import InvalidTransition, PermissionDenied, ValidationFailed, XmemoError

DRAFT = "draft"
PROPOSED = "proposed"
PUBLISHED = "published"
DEPRECATED = "deprecated"
STATES = (DRAFT, PROPOSED, PUBLISHED, DEPRECATED)
# The from-state of a save: the revision does not exist yet.
NEW = None

PERSONAL = "personal"
TEAM = "team"
WORKSPACE_KINDS = (PERSONAL, TEAM)
# Where agents may be served a revision nobody reviewed when a skill has no published one (the
# latest fallback of docs/contract.md §5). A personal workspace's owner is its only author and
# reader; a team reviews so that unreviewed text never reaches agents by default — not through a
# first draft, nor by deprecating the published revision. Level 1 and Level 0 both follow this.
LATEST_FALLBACK_KINDS = frozenset({PERSONAL})

OWNER = "owner"
ADMIN = "admin"
MEMBER = "member"
ROLES = (OWNER, ADMIN, MEMBER)
# The roles that administer a workspace (members, settings, archive/delete, workspace exports).
ADMIN_ROLES = (OWNER, ADMIN)

# What a token may do (docs/contract.md §2); roles are checked apart, by the rows below.
READ = "skills:read"
WRITE = "skills:write"
REVIEW = "skills:review"
EXECUTE = "skills:execute"
WORKSPACE_ADMIN = "workspace:admin"
SCOPES = (READ, WRITE, REVIEW, EXECUTE, WORKSPACE_ADMIN)
# Scopes a consent never grants by default (docs/oauth.md): what each lets a client do.
POWERFUL_SCOPES = {
    REVIEW: "approve, reject and publish revisions, and move labels",
    EXECUTE: "run the scripts of skills in the sandbox",
    WORKSPACE_ADMIN: "manage members, tokens, settings, secrets and webhooks",
}

SAVE_DRAFT = "save_draft"
SAVE_PUBLISH = "save_publish"
PROPOSE = "propose"
WITHDRAW = "withdraw"
APPROVE = "approve"
REJECT = "reject"
REQUEST_CHANGES = "request_changes"
PUBLISH = "publish"
DEPRECATE = "deprecate"
RESTORE = "restore"


@dataclass(frozen=True)
class Transition:
    """One row of the table. ``None`` roles: the action does not exist in that workspace kind."""

    action: str
    from_states: frozenset[str | None]
    to_state: str
    personal_roles: frozenset[str] | None
    team_roles: frozenset[str] | None
    # The revision's author may do it whatever their role.
    author_allowed: bool = False
    # Where the revision lands in a team workspace when that differs from ``to_state``.
    team_to_state: str | None = None
    # Barred to the author when the workspace sets ``require_distinct_reviewer``.
    distinct_reviewer: bool = False
    comment_required: bool = False
    # The token scope the action needs.
    scope: str = WRITE
    # The action is a review decision: it records the reviewer, the time and the comment.
    review_decision: bool = False
    # The action stores a new revision (a save, a restore) rather than moving an existing one.
    creates_revision: bool = False

    def roles_for(self, workspace_kind: str) -> frozenset[str] | None:
        return self.personal_roles if workspace_kind == PERSONAL else self.team_roles

    def target(self, workspace_kind: str) -> str:
        if workspace_kind == TEAM and self.team_to_state is not None:
            return self.team_to_state
        return self.to_state


_OWNER_ONLY = frozenset({OWNER})
_REVIEWERS = frozenset({OWNER, ADMIN})
_EVERYONE = frozenset(ROLES)

TRANSITIONS: tuple[Transition, ...] = (
    Transition(SAVE_DRAFT, frozenset({NEW}), DRAFT, _OWNER_ONLY, _EVERYONE, creates_revision=True),
    Transition(
        SAVE_PUBLISH,
        frozenset({NEW}),
        PUBLISHED,
        _OWNER_ONLY,
        _EVERYONE,
        team_to_state=PROPOSED,
        creates_revision=True,
    ),
    Transition(PROPOSE, frozenset({DRAFT}), PROPOSED, None, _REVIEWERS, author_allowed=True),
    Transition(WITHDRAW, frozenset({PROPOSED}), DRAFT, None, frozenset(), author_allowed=True),
    Transition(
        APPROVE,
        frozenset({PROPOSED}),
        PUBLISHED,
        None,
        _REVIEWERS,
        distinct_reviewer=True,
        scope=REVIEW,
        review_decision=True,
    ),
    Transition(
        REJECT,
        frozenset({PROPOSED}),
        DRAFT,
        None,
        _REVIEWERS,
        comment_required=True,
        scope=REVIEW,
        review_decision=True,
    ),
    # Reject named for what it is (docs/contract.md §16): the revision goes back to its author with
    # a comment.
    Transition(
        REQUEST_CHANGES,
        frozenset({PROPOSED}),
        DRAFT,
        None,
        _REVIEWERS,
        comment_required=True,
        scope=REVIEW,
        review_decision=True,
    ),
    Transition(PUBLISH, frozenset({DRAFT}), PUBLISHED, _OWNER_ONLY, None, scope=REVIEW),
    Transition(
        DEPRECATE, frozenset({DRAFT, PUBLISHED}), DEPRECATED, _OWNER_ONLY, _REVIEWERS, scope=REVIEW
    ),
    # Restore makes a new revision with revision k's content, then acts as save_publish.
    Transition(
        RESTORE,
        frozenset(STATES),
        PUBLISHED,
        _OWNER_ONLY,
        _EVERYONE,
        team_to_state=PROPOSED,
        creates_revision=True,
    ),
)
TRANSITIONS_BY_ACTION = {transition.action: transition for transition in TRANSITIONS}
ACTIONS = tuple(TRANSITIONS_BY_ACTION)
# The actions of ``POST /v1/revisions/{revision_id}/{action}`` (saves have their own endpoint).
REVISION_ACTIONS = tuple(action for action in ACTIONS if action not in (SAVE_DRAFT, SAVE_PUBLISH))
COMMENT_REQUIRED_ACTIONS = frozenset(t.action for t in TRANSITIONS if t.comment_required)

_NOT_IN_KIND_HINTS = {
    PERSONAL: "a personal workspace has no review step; publish or deprecate the revision directly",
    TEAM: "team revisions go through review: propose it, then an admin or owner approves it",
}


# What ``comment_required`` asks for, by action (the reason a reviewer gives the author).
_COMMENT_NEEDED = {
    REJECT: "A rejection needs a comment for the author.",
    REQUEST_CHANGES: "Requesting changes needs a comment for the author: say what to change.",
}


def require_comment(action: str) -> bool:
    """True when the action needs a non-empty comment (reject); ``check_transition`` enforces
    it."""
    return action in COMMENT_REQUIRED_ACTIONS


def transition_for(action: str, *, moves_only: bool = False) -> Transition:
    """The table's row of ``action``, or InvalidTransition for an action it does not have.
    ``moves_only``: only actions that move an existing revision (not saves or restore), the
    ones ``services.skills.revision_transition`` applies."""
    transition = TRANSITIONS_BY_ACTION.get(action)
    known = [a for a in ACTIONS if not (moves_only and TRANSITIONS_BY_ACTION[a].creates_revision)]
    if transition is None or action not in known:
        raise InvalidTransition(
            f"{action!r} is not a lifecycle action; use one of {', '.join(known)}.",
            details={"action": action},
        )
    return transition


def publish_action(workspace_kind: str) -> str:
    """How a revision that exists gets published: directly (personal) or through review."""
    return PUBLISH if workspace_kind == PERSONAL else PROPOSE


def _who(transition: Transition, roles: frozenset[str]) -> str:
    names = (["the revision's author"] if transition.author_allowed else []) + [
        f"the {role}" if role == OWNER else f"an {role}" if role == ADMIN else "any member"
        for role in ROLES
        if role in roles
    ]
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " or " + names[-1]


def _evaluate(
    *,
    action: str,
    state: str | None,
    workspace_kind: str,
    role: str | None,
    is_author: bool,
    require_distinct_reviewer: bool,
) -> XmemoError | Transition:
    """The transition when the move is allowed, else the error ``check_transition`` raises."""
    if workspace_kind not in WORKSPACE_KINDS:
        raise ValueError(f"unknown workspace kind {workspace_kind!r}")
    details = {"action": action, "state": state}
    transition = TRANSITIONS_BY_ACTION.get(action)
    if transition is None:
        return InvalidTransition(
            f"{action!r} is not a lifecycle action; use one of {', '.join(ACTIONS)}.",
            details=details,
        )
    roles = transition.roles_for(workspace_kind)
    if roles is None:
        return InvalidTransition(
            f"There is no {action!r} in a {workspace_kind} workspace: "
            f"{_NOT_IN_KIND_HINTS[workspace_kind]}.",
            details=details,
        )
    if state not in transition.from_states:
        allowed = sorted("new" if s is NEW else s for s in transition.from_states)
        return InvalidTransition(
            f"Cannot {action} a {state or 'new'} revision: "
            f"{action} needs one that is {' or '.join(allowed)}.",
            details=details,
        )
    denied = {**details, "role": role}
    if role is None:
        return PermissionDenied("You are not a member of this workspace.", details=denied)
    if role not in roles and not (transition.author_allowed and is_author):
        return PermissionDenied(
            f"Only {_who(transition, roles)} may {action} this revision.", details=denied
        )
    if transition.distinct_reviewer and require_distinct_reviewer and is_author:
        return PermissionDenied(
            "This workspace requires someone other than the author to approve a revision.",
            details=denied,
        )
    return transition


def check_transition(
    *,
    action: str,
    state: str | None,
    workspace_kind: str,
    role: str | None,
    is_author: bool,
    require_distinct_reviewer: bool = False,
    comment: str = "",
) -> str:
    """The state the revision moves to, or raise InvalidTransition / PermissionDenied, then
    ValidationFailed (field ``comment``) when the action needs a comment and has none.

    ``state`` is the revision's current state (``None`` for a save, whose revision is new; for
    restore, the state of the revision being restored). ``role`` is the caller's role in the
    workspace, ``None`` when not a member.
    """
    outcome = _evaluate(
        action=action,
        state=state,
        workspace_kind=workspace_kind,
        role=role,
        is_author=is_author,
        require_distinct_reviewer=require_distinct_reviewer,
    )
    if isinstance(outcome, XmemoError):
        raise outcome
    if outcome.comment_required and not comment.strip():
        raise ValidationFailed(
            _COMMENT_NEEDED.get(action, f"{action} needs a comment."), details={"field": "comment"}
        )
    return outcome.target(workspace_kind)


def actions_available(
    *,
    state: str | None,
    workspace_kind: str,
    role: str | None,
    is_author: bool,
    require_distinct_reviewer: bool = False,
) -> list[str]:
    """The actions ``check_transition`` would allow, in table order (the console's buttons)."""
    return [
        action
        for action in ACTIONS
        if isinstance(
            _evaluate(
                action=action,
                state=state,
                workspace_kind=workspace_kind,
                role=role,
                is_author=is_author,
                require_distinct_reviewer=require_distinct_reviewer,
            ),
            Transition,
        )
    ]


REVIEW_DECISIONS = frozenset(t.action for t in TRANSITIONS if t.review_decision)


@dataclass(frozen=True)
class RevisionButtons:
    """What a revision's row offers: its lifecycle buttons, and a Review link where a review
    decision is open to the role (decisions are taken on the review page, not from a row)."""

    actions: tuple[str, ...]
    reviewable: bool


def revision_buttons(
    *,
    state: str | None,
    workspace_kind: str,
    role: str | None,
    is_author: bool,
    is_latest: bool,
    require_distinct_reviewer: bool = False,
) -> RevisionButtons:
    """The row's buttons: ``actions_available`` less the review decisions, and no restore of
    the latest revision (restoring it would store the same revision again)."""
    available = actions_available(
        state=state,
        workspace_kind=workspace_kind,
        role=role,
        is_author=is_author,
        require_distinct_reviewer=require_distinct_reviewer,
    )
    return RevisionButtons(
        actions=tuple(
            action
            for action in available
            if action not in REVIEW_DECISIONS and not (action == RESTORE and is_latest)
        ),
        reviewable=not REVIEW_DECISIONS.isdisjoint(available),
    )


# --- skill-level actions --------------------------------------------------------------------

ACTIVE = "active"
ARCHIVED = "archived"
SKILL_STATUSES = (ACTIVE, ARCHIVED)

ARCHIVE = "archive"
UNARCHIVE = "unarchive"
DELETE = "delete"


@dataclass(frozen=True)
class SkillAction:
    """One row of the skill table: who may do what to a whole skill, from which status.

    The caller's role is checked before the status (the order the services always had): a
    member asking to delete learns they may not, whatever the skill's status."""

    action: str
    from_statuses: frozenset[str]
    # The status the skill ends in; ``None``: the skill is gone.
    to_status: str | None
    roles: tuple[str, ...]
    scope: str = WRITE
    # Why the action is refused from another status.
    refusal: str = ""


SKILL_ACTIONS: tuple[SkillAction, ...] = (
    # Archiving an archived skill (or unarchiving an active one) is a no-op, not an error.
    SkillAction(ARCHIVE, frozenset(SKILL_STATUSES), ARCHIVED, ADMIN_ROLES),
    SkillAction(UNARCHIVE, frozenset(SKILL_STATUSES), ACTIVE, ADMIN_ROLES),
    SkillAction(
        DELETE,
        frozenset({ARCHIVED}),
        None,
        ADMIN_ROLES,
        refusal="Archive the skill before deleting it for good.",
    ),
)
SKILL_ACTIONS_BY_NAME = {row.action: row for row in SKILL_ACTIONS}


def skill_action(action: str) -> SkillAction:
    """The skill table's row of ``action``."""
    row = SKILL_ACTIONS_BY_NAME.get(action)
    if row is None:
        raise InvalidTransition(
            f"{action!r} is not a skill action; use one of {', '.join(SKILL_ACTIONS_BY_NAME)}.",
            details={"action": action},
        )
    return row


def check_skill_status(*, action: str, status: str) -> str | None:
    """The status the skill ends in (``None``: deleted), or InvalidTransition when ``status``
    is not a from-status of the action. The role is checked by the caller with the row's
    ``roles`` (``access.require_role``), before this."""
    row = skill_action(action)
    if status not in row.from_statuses:
        raise InvalidTransition(
            row.refusal or f"Cannot {action} a skill that is {status}.",
            details={"status": status},
        )
    return row.to_status


def skill_actions_available(*, status: str, role: str | None) -> list[str]:
    """The skill actions the role may take from ``status``, in table order (the console's
    buttons)."""
    return [
        row.action for row in SKILL_ACTIONS if role in row.roles and status in row.from_statuses
    ]
