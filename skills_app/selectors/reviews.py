"""The read side of a review conversation: a revision's comments and approvals."""

from __future__ import annotations

from typing import Any

from ..access import Actor, require_scope, revision_for
from ..domain.markdown import render_markdown
from ..models import RevisionApproval, RevisionComment, SkillRevision
from .pagination import Page, paginate


def _username(user: Any) -> str | None:
    return user.get_username() if user is not None else None


def comment_as_dict(comment: RevisionComment) -> dict[str, Any]:
    return {
        "comment_id": comment.comment_id,
        "revision_id": comment.revision.revision_id,
        "author": _username(comment.author),
        "imported_author": comment.imported_author,
        "body": comment.body,
        "body_html": render_markdown(comment.body),
        "line": comment.line,
        "action": comment.action or None,
        "created_at": comment.created_at.isoformat(),
    }


def revision_comments(*, actor: Actor, revision_id: str, cursor: str | None, limit: int) -> Page:
    """The revision's thread, oldest first (members of its workspace only; else 404)."""
    require_scope(actor, "skills:read")
    revision = revision_for(actor, revision_id)
    return paginate(
        RevisionComment.objects.filter(revision=revision).select_related("author", "revision"),
        kind="comments",
        order=[("created_at", False), ("pk", False)],
        cursor=cursor,
        limit=limit,
        serialize=comment_as_dict,
    )


def revision_approvals(revision: SkillRevision) -> list[dict[str, Any]]:
    """Every approval recorded on the revision (who, when), oldest first."""
    return [
        {
            "user": _username(approval.user),
            "imported_user": approval.imported_user,
            "created_at": approval.created_at.isoformat(),
        }
        for approval in RevisionApproval.objects.filter(revision=revision).select_related("user")
    ]
