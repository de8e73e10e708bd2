"""The read side of a review conversation: a revision's comments and approvals."""

from __future__ import annotations

from django.db.models import QuerySet

from skills_app.access import ADMIN_ROLES, Actor, require_scope, revision_for, revisions_for
from skills_app.domain import shapes
from skills_app.domain.markdown import render_markdown
from skills_app.models import RevisionApproval, RevisionComment, SkillRevision, Workspace
from skills_app.models.tenancy import acted_by
from skills_app.selectors.pagination import Page, paginate


def comment_as_dict(comment: RevisionComment) -> shapes.Comment:
    return {
        "comment_id": comment.comment_id,
        "revision_id": comment.revision.revision_id,
        "author": comment.author_label,
        "imported_author": comment.imported_author,
        "body": comment.body,
        "body_html": render_markdown(comment.body),
        "line": comment.line,
        "action": comment.action or None,
        "created_at": comment.created_at.isoformat(),
    }


def revision_comments(
    *, actor: Actor, revision_id: str, cursor: str | None, limit: int
) -> Page[shapes.Comment]:
    """The revision's thread, oldest first (members of its workspace only; else 404)."""
    require_scope(actor, "skills:read")
    revision = revision_for(actor, revision_id)
    return paginate(
        RevisionComment.objects.filter(revision=revision).select_related(
            "author", "author_token", "revision"
        ),
        kind="comments",
        order=[("created_at", False), ("pk", False)],
        cursor=cursor,
        limit=limit,
        serialize=comment_as_dict,
    )


def revision_approvals(revision: SkillRevision) -> list[shapes.Approval]:
    """Every approval recorded on the revision (who, when), oldest first."""
    return [
        {
            "user": acted_by(approval.user, approval.token),
            "imported_user": approval.imported_user,
            "created_at": approval.created_at.isoformat(),
        }
        for approval in RevisionApproval.objects.filter(revision=revision).select_related(
            "user", "token"
        )
    ]


def eligible_approvals(
    approvals: QuerySet[RevisionApproval], revision: SkillRevision
) -> QuerySet[RevisionApproval]:
    """Approvals by people who are still the workspace's admins or owners."""
    return approvals.filter(
        user__memberships__workspace_id=revision.workspace_id,
        user__memberships__role__in=ADMIN_ROLES,
    )


def revision_sign_offs(revision: SkillRevision) -> list[str]:
    """Who has signed off ``revision`` (docs/contract.md §21): distinct reviewers who approved
    it in any round, or once it was published, never its author, each still an admin or owner
    of the workspace (a demoted approver no longer counts). Usernames, first approval first."""
    approvals = eligible_approvals(RevisionApproval.objects.filter(revision=revision), revision)
    if revision.author_id is not None:
        approvals = approvals.exclude(user_id=revision.author_id)
    names: list[str] = []
    for name in approvals.order_by("created_at").values_list("user__username", flat=True):
        if name not in names:
            names.append(name)
    return names


def revision_thread(*, revision: SkillRevision) -> list[RevisionComment]:
    """The comments of a revision fetched through ``access``, oldest first, with authors."""
    return list(
        RevisionComment.objects.filter(revision=revision)
        .select_related("author", "author_token")
        .order_by("created_at", "pk")
    )


def _proposed(actor: Actor, workspace: Workspace) -> QuerySet[SkillRevision]:
    return revisions_for(actor, workspace=workspace).filter(state=SkillRevision.State.PROPOSED)


def awaiting_review(*, actor: Actor, workspace: Workspace) -> list[SkillRevision]:
    """The workspace's proposed revisions, oldest first, with skill, author and the published
    revision each would replace."""
    return list(
        _proposed(actor, workspace)
        .select_related("skill", "author", "author_token", "skill__published_revision")
        .order_by("created_at")
    )


def awaiting_review_count(*, actor: Actor, workspace: Workspace) -> int:
    """How many revisions of the workspace wait for review (none where Cloud Skills is off)."""
    if not workspace.cloud_skills_enabled:
        return 0
    return _proposed(actor, workspace).count()
