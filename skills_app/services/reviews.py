"""The review conversation of a revision (docs/contract.md §16): comments, and the approvals a team
needs.

``revision_comment_add`` is its own use case (one transaction). ``thread_comment_record`` and
``approval_record`` run inside the lifecycle transaction of ``services.skills`` (the skill row is
locked there), so concurrent approvals count one after the other.
"""

from __future__ import annotations

from django.db import transaction

from skills_app import errors
from skills_app.access import ADMIN_ROLES, Actor
from skills_app.domain.text import unstorable_reason
from skills_app.models import RevisionApproval, RevisionComment, SkillRevision
from skills_app.selectors.reviews import eligible_approvals, revision_sign_offs
from skills_app.services.audit import audit_record
from skills_app.services.notifications import review_notify

COMMENT_MAX_CHARS = 10_000


def _comment_body_clean(body: str, *, field: str = "body") -> str:
    if not isinstance(body, str) or not body.strip():
        raise errors.ValidationFailed(
            "A comment needs some text.", details={"field": field, "reason": "empty"}
        )
    unstorable = unstorable_reason(body)  # NUL or a lone surrogate: no database stores it
    if unstorable:
        raise errors.ValidationFailed(
            f"The comment {unstorable}.", details={"field": field, "reason": "unstorable"}
        )
    if len(body) > COMMENT_MAX_CHARS:
        raise errors.ValidationFailed(
            f"A comment is limited to {COMMENT_MAX_CHARS:,} characters.",
            details={"field": field, "limit": COMMENT_MAX_CHARS},
        )
    return body.strip()


def _line_check(revision: SkillRevision, line: int | None) -> None:
    """``line`` anchors the comment to a line of the revision's instruction body (1-based)."""
    if line is None:
        return
    lines = max(1, len(revision.instruction_body.splitlines()))
    if isinstance(line, bool) or not isinstance(line, int) or not 1 <= line <= lines:
        raise errors.ValidationFailed(
            f"line must be a line of the revision's body, 1 to {lines}.",
            details={"field": "line", "lines": lines},
        )


def thread_comment_record(
    *, actor: Actor, revision: SkillRevision, body: str, line: int | None = None, action: str = ""
) -> RevisionComment:
    """Store one comment of the thread (inside the caller's transaction) and audit it."""
    comment = RevisionComment.objects.create(
        revision=revision,
        workspace_id=revision.workspace_id,
        author=actor.person,
        author_token=actor.workspace_token,
        body=_comment_body_clean(body, field="comment" if action else "body"),
        line=line,
        action=action,
    )
    audit_record(
        actor=actor,
        workspace=revision.workspace,
        action="skills.revision.comment",
        target_type="revision",
        target_id=revision.revision_id,
        data={
            "comment_id": comment.comment_id,
            "line": line,
            **({"with_action": action} if action else {}),
        },
    )
    return comment


def revision_comment_add(
    *, actor: Actor, revision: SkillRevision, body: str, line: int | None = None
) -> RevisionComment:
    """A member's comment on a revision, optionally on one ``line`` of its body."""
    if not (actor.has_scope("skills:write") or actor.has_scope("skills:review")):
        raise errors.PermissionDenied(
            "Commenting needs the 'skills:write' or 'skills:review' scope.",
            details={"required_scope": "skills:write"},
        )
    if actor.role_in(revision.workspace) is None:
        raise errors.NotFound(
            f"Revision '{revision.revision_id}' was not found.",
            details={"revision_id": revision.revision_id},
        )
    _comment_body_clean(body)
    _line_check(revision, line)
    with transaction.atomic():
        comment = thread_comment_record(actor=actor, revision=revision, body=body, line=line)
        review_notify(kind="commented", actor=actor, revision=revision, comment=comment)
        return comment


def approval_record(*, actor: Actor, revision: SkillRevision) -> int:
    """Record the actor's approval (the lifecycle table already allowed it) and answer how many
    distinct reviewers, still admins or owners, have approved since the revision was proposed."""
    round_approvals = RevisionApproval.objects.filter(revision=revision)
    if revision.state_changed_at is not None:
        round_approvals = round_approvals.filter(created_at__gte=revision.state_changed_at)
    token, person = actor.workspace_token, actor.person
    mine = round_approvals.filter(token=token) if token else round_approvals.filter(user=person)
    if (token or person) is not None and mine.exists():
        raise errors.Conflict(
            "You have already approved this revision; another reviewer's approval is needed.",
            details={"revision_id": revision.revision_id},
        )
    RevisionApproval.objects.create(revision=revision, user=person, token=token)
    people = eligible_approvals(round_approvals, revision)
    # A workspace token is a reviewer of its own while it is an admin token of this team.
    tokens = round_approvals.filter(
        token__workspace_id=revision.workspace_id, token__role="admin", token__revoked_at=None
    )
    return people.values("user").distinct().count() + tokens.values("token").distinct().count()


def sign_off_record(*, actor: Actor, revision: SkillRevision) -> None:
    """A reviewer's approval of a revision that is already published: a second sign-off
    (docs/contract.md §21). Admins and owners, never the author, once each; audited."""
    if actor.role_in(revision.workspace) not in ADMIN_ROLES:
        raise errors.PermissionDenied(
            "Only the workspace's admins and owners sign off a revision.",
            details={"revision_id": revision.revision_id},
        )
    person = actor.person
    if person is None or person.pk == revision.author_id:
        raise errors.PermissionDenied(
            "A sign-off is a person's, never the author's: another reviewer signs it off.",
            details={"revision_id": revision.revision_id},
        )
    if RevisionApproval.objects.filter(revision=revision, user=person).exists():
        raise errors.Conflict(
            "You have already approved this revision; another reviewer's sign-off is needed.",
            details={"revision_id": revision.revision_id},
        )
    RevisionApproval.objects.create(revision=revision, user=person)
    audit_record(
        actor=actor,
        workspace=revision.workspace,
        action="skills.revision.sign_off",
        target_type="revision",
        target_id=revision.revision_id,
        data={"sign_offs": revision_sign_offs(revision)},
    )
