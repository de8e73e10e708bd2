"""Reads of workspaces, memberships, tokens and the audit log."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from django.db.models import OuterRef, Q, QuerySet, Subquery, Value

from skills_app import errors
from skills_app.access import (
    ADMIN_ROLES,
    Actor,
    readable_workspaces,
    require_role,
    require_scope,
    require_unrestricted,
    require_workspace_admin,
)
from skills_app.domain import shapes
from skills_app.models import ApiToken, AuditEntry, Membership, Workspace
from skills_app.selectors.pagination import Page, paginate

ACTION_MAX_LENGTH = 64


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def require_any_scope(actor: Actor, *scopes: str) -> None:
    if not any(actor.has_scope(scope) for scope in scopes):
        require_scope(actor, scopes[0])


# --- workspaces and members ---------------------------------------------------------------------


def workspace_as_dict(workspace: Workspace, role: str | None) -> shapes.Workspace:
    return {
        "slug": workspace.slug,
        "name": workspace.name,
        "kind": workspace.kind,
        "role": role,
        "cloud_skills_enabled": workspace.cloud_skills_enabled,
        "require_distinct_reviewer": workspace.require_distinct_reviewer,
        "allow_dangerous_scripts": workspace.allow_dangerous_scripts,
        "required_approvals": workspace.required_approvals,
        "permission_mode": (
            workspace.permission_mode if workspace.kind == Workspace.Kind.TEAM else None
        ),
        "created_at": workspace.created_at.isoformat(),
    }


def workspace_list(
    *, actor: Actor, cursor: str | None = None, limit: int = 50
) -> Page[shapes.Workspace]:
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


def member_as_dict(membership: Membership) -> shapes.Member:
    return {
        "username": membership.user.get_username(),
        "role": membership.role,
        "created_at": membership.created_at.isoformat(),
    }


def workspace_members(*, actor: Actor, workspace: Workspace) -> QuerySet[Membership]:
    """The workspace's memberships with their users, by username (its members only)."""
    require_any_scope(actor, "skills:read", "workspace:admin")
    require_role(actor, workspace)
    return (
        Membership.objects.filter(workspace=workspace)
        .select_related("user")
        .order_by("user__username")
    )


def member_list(
    *, actor: Actor, workspace: Workspace, cursor: str | None = None, limit: int = 50
) -> Page[shapes.Member]:
    return paginate(
        workspace_members(actor=actor, workspace=workspace),
        kind=f"members:{workspace.slug}",
        order=[("user__username", False)],
        cursor=cursor,
        limit=limit,
        serialize=member_as_dict,
    )


def user_memberships(*, actor: Actor) -> list[Membership]:
    """The actor's own memberships of the workspaces it reads (disabled ones too), with their
    workspaces: personal first, then teams by slug (the console's workspace switcher)."""
    if actor.user is None:
        return []
    return list(
        Membership.objects.filter(
            user=actor.user,
            workspace__in=readable_workspaces(actor, include_disabled=True),
        )
        .select_related("workspace")
        .order_by("workspace__kind", "workspace__slug")  # "personal" sorts before "team"
    )


def home_workspace(*, actor: Actor, last_slug: str | None = None) -> Workspace | None:
    """Where a signed-in person lands: the workspace used last (``last_slug``, if still
    readable), else their personal one, else the first readable one; None without any."""
    workspaces = readable_workspaces(actor, include_disabled=True)
    return (
        (workspaces.filter(slug=last_slug).first() if last_slug else None)
        or workspaces.filter(kind=Workspace.Kind.PERSONAL).first()
        or workspaces.first()
    )


# --- tokens -------------------------------------------------------------------------------------


def token_as_dict(token: ApiToken) -> shapes.Token:
    return {
        "token_id": token.token_id,
        "name": token.name,
        "prefix": token.prefix,
        "scopes": list(token.scopes or []),
        "workspace": token.workspace.slug if token.workspace_id and token.workspace else None,
        "profile": token.client_profile,
        "expires_at": _iso(token.expires_at),
        "created_at": token.created_at.isoformat(),
        "last_used_at": _iso(token.last_used_at),
        "revoked_at": _iso(token.revoked_at),
        "owner": "workspace" if token.owned_by_workspace else "user",
        "role": token.role or None,
        "permission_mode": token.permission_mode or None,
        "created_by": token.user.get_username() if token.owned_by_workspace else None,
    }


def tokens_listed(*, actor: Actor, workspace: Workspace | None = None) -> QuerySet[ApiToken]:
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
    return tokens.select_related("workspace", "user", "oauth_connection__application").order_by(
        "-created_at", "-id"
    )


def token_list(
    *,
    actor: Actor,
    workspace: Workspace | None = None,
    cursor: str | None = None,
    limit: int = 50,
) -> Page[shapes.Token]:
    """``tokens_listed`` as a page of the API."""
    return paginate(
        tokens_listed(actor=actor, workspace=workspace),
        kind="tokens",
        order=[("created_at", True), ("id", True)],
        cursor=cursor,
        limit=limit,
        serialize=token_as_dict,
    )


# --- audit --------------------------------------------------------------------------------------


def audit_as_dict(entry: AuditEntry) -> shapes.Audit:
    return {
        "action": entry.action,
        "actor": entry.actor_label or None,
        "target_type": entry.target_type,
        "target_id": entry.target_id,
        "data": entry.data,
        "ip": entry.ip,
        "via": entry.via,
        "created_at": entry.created_at.isoformat(),
    }


@dataclass(frozen=True)
class AuditFilter:
    """What the audit log is narrowed by, the same through every door (REST, console).

    ``action``: an exact action or a dotted prefix — ``skills.revision`` (or ``skills.revision.``)
    matches ``skills.revision`` and ``skills.revision.approve``, never ``skills.revisions.bulk``;
    ``skills.rev`` matches nothing. ``actor``: the actor's label, case-insensitively.
    ``target``: a target id, exactly. ``since`` / ``until``: days (inclusive, in TIME_ZONE).
    Empty strings and None filter nothing; text is stripped."""

    action: str = ""
    actor: str = ""
    target: str = ""
    since: date | None = None
    until: date | None = None


def audit_entries(
    *, actor: Actor, workspace: Workspace, filters: AuditFilter | None = None
) -> QuerySet[AuditEntry]:
    """The workspace's audit log narrowed by ``filters``, newest first (admins and owners)."""
    require_scope(actor, "workspace:admin")
    require_role(actor, workspace, ADMIN_ROLES)
    filters = filters or AuditFilter()
    qs = AuditEntry.objects.filter(workspace=workspace)
    action = filters.action.strip()
    if len(action) > ACTION_MAX_LENGTH:
        raise errors.ValidationFailed(
            f"action is limited to {ACTION_MAX_LENGTH} characters.", details={"field": "action"}
        )
    action = action.rstrip(".")
    if action:
        qs = qs.filter(Q(action=action) | Q(action__startswith=action + "."))
    if who := filters.actor.strip():
        qs = qs.filter(actor_label__iexact=who)
    if target := filters.target.strip():
        qs = qs.filter(target_id=target)
    if filters.since is not None:
        qs = qs.filter(created_at__date__gte=filters.since)
    if filters.until is not None:
        qs = qs.filter(created_at__date__lte=filters.until)
    return qs.order_by("-created_at", "-id")


def audit_list(
    *,
    actor: Actor,
    workspace: Workspace,
    filters: AuditFilter | None = None,
    cursor: str | None = None,
    limit: int = 50,
) -> Page[shapes.Audit]:
    """``audit_entries`` as a page of the API."""
    return paginate(
        audit_entries(actor=actor, workspace=workspace, filters=filters),
        kind=f"audit:{workspace.slug}",
        order=[("created_at", True), ("id", True)],
        cursor=cursor,
        limit=limit,
        serialize=audit_as_dict,
    )
