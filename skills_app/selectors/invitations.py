"""Reads of invitations: a team's pending list, and the invitation behind a link."""

from __future__ import annotations

from django.db.models import QuerySet
from django.utils import timezone

from skills_app import errors
from skills_app.access import ADMIN_ROLES, Actor, require_role, require_scope
from skills_app.domain import shapes
from skills_app.domain.tokens import token_hash
from skills_app.models import Invitation, Workspace
from skills_app.selectors.pagination import Page, paginate


def invitation_state(invitation: Invitation) -> str:
    """``accepted``, ``revoked``, ``expired`` or ``pending``: the one place that decides."""
    if invitation.accepted_at is not None:
        return "accepted"
    if invitation.revoked_at is not None:
        return "revoked"
    if invitation.expires_at <= timezone.now():
        return "expired"
    return "pending"


def pending_invitations(workspace: Workspace) -> QuerySet[Invitation]:
    return Invitation.objects.filter(
        workspace=workspace,
        accepted_at__isnull=True,
        revoked_at__isnull=True,
        expires_at__gt=timezone.now(),
    ).select_related("invited_by")


def invitation_as_dict(invitation: Invitation) -> shapes.Invitation:
    return {
        "id": invitation.invitation_id,
        "email": invitation.email,
        "role": invitation.role,
        "state": invitation_state(invitation),
        "invited_by": invitation.invited_by.get_username() if invitation.invited_by else None,
        "created_at": invitation.created_at.isoformat(),
        "expires_at": invitation.expires_at.isoformat(),
    }


def invitations_pending(*, actor: Actor, workspace: Workspace) -> QuerySet[Invitation]:
    """A team's pending invitations, newest first (owners and admins)."""
    require_scope(actor, "workspace:admin")
    require_role(actor, workspace, ADMIN_ROLES)
    return pending_invitations(workspace).order_by("-created_at", "-id")


def invitation_list(
    *, actor: Actor, workspace: Workspace, cursor: str | None = None, limit: int = 50
) -> Page[shapes.Invitation]:
    """``invitations_pending`` as a page of the API."""
    return paginate(
        invitations_pending(actor=actor, workspace=workspace),
        kind=f"invitations:{workspace.slug}",
        order=[("created_at", True), ("id", True)],
        cursor=cursor,
        limit=limit,
        serialize=invitation_as_dict,
    )


_UNUSABLE = {
    "accepted": "This invitation has already been used. Sign in, or ask the team for a new one.",
    "revoked": "This invitation was withdrawn by the team. Ask them for a new one.",
    "expired": "This invitation has expired. Ask the team to send it again.",
}


def invitation_by_link(*, token: str, for_update: bool = False) -> Invitation:
    """The usable invitation behind a link token, or the error that says why it is not."""
    qs = Invitation.objects.select_related("workspace", "invited_by")
    if for_update:
        qs = qs.select_for_update(of=("self",))
    invitation = qs.filter(token_hash=token_hash(token)).first()
    if invitation is None:
        raise errors.NotFound("This invitation link is not valid. Check that it was copied whole.")
    state = invitation_state(invitation)
    if state != "pending":
        raise errors.InvitationUnusable(_UNUSABLE[state], details={"reason": state})
    return invitation
