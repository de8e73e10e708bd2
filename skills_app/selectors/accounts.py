"""Reads of workspaces, memberships, tokens and the audit log."""

from __future__ import annotations

from typing import Any

from django.db.models import OuterRef, Q, Subquery, Value

from .. import errors
from ..access import (
    ADMIN_ROLES,
    Actor,
    readable_workspaces,
    require_role,
    require_scope,
    require_unrestricted,
    require_workspace_admin,
)
from ..models import ApiToken, AuditEntry, Membership, Workspace
from .pagination import Page, paginate

ACTION_MAX_LENGTH = 64


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def require_any_scope(actor: Actor, *scopes: str) -> None:
    if not any(actor.has_scope(scope) for scope in scopes):
        require_scope(actor, scopes[0])


# --- workspaces and members ---------------------------------------------------------------------


def workspace_as_dict(workspace: Workspace, role: str | None) -> dict[str, Any]:
    return {
        "slug": workspace.slug,
        "name": workspace.name,
        "kind": workspace.kind,
        "role": role,
        "cloud_skills_enabled": workspace.cloud_skills_enabled,
        "require_distinct_reviewer": workspace.require_distinct_reviewer,
        "allow_dangerous_scripts": workspace.allow_dangerous_scripts,
        "required_approvals": workspace.required_approvals,
        "created_at": _iso(workspace.created_at),
    }


def workspace_list(*, actor: Actor, cursor: str | None = None, limit: int = 50) -> Page:
    """The caller's workspaces (disabled ones too, so a client can say why skills are off)."""
    require_any_scope(actor, "skills:read", "workspace:admin")
    # A workspace's token has its own role there, whatever its creator's membership says.
    token_role = actor.token.role if actor.token is not None else ""
    qs = readable_workspaces(actor, include_disabled=True).annotate(
        my_role=Value(token_role)
        if token_role
        else Subquery(
            Membership.objects.filter(workspace=OuterRef("pk"), user=actor.user).values("role")[:1]
        )
    )
    return paginate(
        qs,
        kind="workspaces",
        order=[("slug", False)],
        cursor=cursor,
        limit=limit,
        serialize=lambda ws: workspace_as_dict(ws, getattr(ws, "my_role", None)),
    )


def member_as_dict(membership: Membership) -> dict[str, Any]:
    return {
        "username": membership.user.get_username(),
        "role": membership.role,
        "created_at": _iso(membership.created_at),
    }


def member_list(
    *, actor: Actor, workspace: Workspace, cursor: str | None = None, limit: int = 50
) -> Page:
    require_any_scope(actor, "skills:read", "workspace:admin")
    require_role(actor, workspace)
    return paginate(
        Membership.objects.filter(workspace=workspace).select_related("user"),
        kind=f"members:{workspace.slug}",
        order=[("user__username", False)],
        cursor=cursor,
        limit=limit,
        serialize=member_as_dict,
    )


# --- tokens -------------------------------------------------------------------------------------


def token_as_dict(token: ApiToken) -> dict[str, Any]:
    return {
        "token_id": token.token_id,
        "name": token.name,
        "prefix": token.prefix,
        "scopes": list(token.scopes or []),
        "workspace": token.workspace.slug if token.workspace_id and token.workspace else None,
        "profile": token.client_profile,
        "expires_at": _iso(token.expires_at),
        "created_at": _iso(token.created_at),
        "last_used_at": _iso(token.last_used_at),
        "revoked_at": _iso(token.revoked_at),
        "owner": "workspace" if token.owned_by_workspace else "user",
        "role": token.role or None,
        "created_by": token.user.get_username() if token.owned_by_workspace else None,
    }


def token_list(
    *,
    actor: Actor,
    workspace: Workspace | None = None,
    cursor: str | None = None,
    limit: int = 50,
) -> Page:
    """The caller's own tokens, or with ``workspace`` the tokens that team owns (its owners
    and admins), newest first; secrets are never retrievable."""
    if workspace is not None:
        require_workspace_admin(actor, workspace)
        tokens = ApiToken.objects.filter(workspace=workspace).exclude(role="")
    else:
        require_scope(actor, "workspace:admin")
        require_unrestricted(actor, "list its user's tokens")
        if actor.user is None:
            raise errors.PermissionDenied("Only a user has tokens.")
        tokens = ApiToken.objects.filter(user=actor.user, role="")
    return paginate(
        tokens.select_related("workspace", "user"),
        kind="tokens",
        order=[("created_at", True), ("id", True)],
        cursor=cursor,
        limit=limit,
        serialize=token_as_dict,
    )


def token_for(actor: Actor, token_id: str) -> ApiToken:
    """One of the caller's own tokens; anyone else's answers 404 like a missing one."""
    not_found = errors.NotFound(
        f"Token '{token_id}' was not found.", details={"token_id": token_id}
    )
    if actor.user is None:
        raise not_found
    token = (
        ApiToken.objects.filter(token_id=token_id)
        .filter(
            Q(user=actor.user, role="")
            | (
                ~Q(role="")
                & Q(
                    workspace__memberships__user=actor.user,
                    workspace__memberships__role__in=ADMIN_ROLES,
                )
            )
        )
        .select_related("workspace")
        .first()
    )
    if token is None:
        raise not_found
    return token


# --- audit --------------------------------------------------------------------------------------


def audit_as_dict(entry: AuditEntry) -> dict[str, Any]:
    return {
        "action": entry.action,
        "actor": entry.actor_label or None,
        "target_type": entry.target_type,
        "target_id": entry.target_id,
        "data": entry.data,
        "ip": entry.ip,
        "via": entry.via,
        "created_at": _iso(entry.created_at),
    }


def audit_list(
    *,
    actor: Actor,
    workspace: Workspace,
    action: str | None = None,
    cursor: str | None = None,
    limit: int = 50,
) -> Page:
    """Newest first. ``action`` matches exactly or as a dotted prefix (``skills.revision``)."""
    require_scope(actor, "workspace:admin")
    require_role(actor, workspace, ADMIN_ROLES)
    qs = AuditEntry.objects.filter(workspace=workspace)
    if action:
        if len(action) > ACTION_MAX_LENGTH:
            raise errors.ValidationFailed(
                f"action is limited to {ACTION_MAX_LENGTH} characters.", details={"field": "action"}
            )
        qs = qs.filter(Q(action=action) | Q(action__startswith=action.rstrip(".") + "."))
    return paginate(
        qs,
        kind=f"audit:{workspace.slug}",
        order=[("created_at", True), ("id", True)],
        cursor=cursor,
        limit=limit,
        serialize=audit_as_dict,
    )
