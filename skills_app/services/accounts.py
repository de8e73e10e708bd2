"""Users, workspaces, memberships and API tokens."""

from __future__ import annotations

import secrets
from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from skills_app import errors
from skills_app.access import (
    ADMIN_ROLES,
    ROLES,
    SCOPES,
    Actor,
    require_role,
    require_scope,
    require_unrestricted,
    require_workspace_admin,
)
from skills_app.domain.limits import (
    SLUG_MAX,
    TOKEN_NAME_MAX,
    name_check,
    slug_from_name,
    validate_slug,
    workspace_name_clean,
)
from skills_app.domain.permission_modes import permission_mode_check, stricter_mode
from skills_app.domain.tokens import TOKEN_PREFIX, token_hash
from skills_app.mcp_profiles import DEFAULT_PROFILE, exposed_surfaces, exposed_tools, profile_names
from skills_app.models import ApiToken, Membership, Workspace
from skills_app.services.audit import audit_record


@transaction.atomic
def user_create(
    *,
    username: str,
    email: str = "",
    password: str | None = None,
    check_password_strength: bool = True,
) -> User:
    """Create a user with their personal workspace (slug = username). Idempotent.

    ``password`` must pass the configured password validators unless
    ``check_password_strength`` is False, which only the embedded demo seed uses.
    """
    user_model = get_user_model()
    user = user_model.objects.filter(username=username).first()
    if password and check_password_strength:
        try:
            validate_password(password, user or user_model(username=username, email=email))
        except DjangoValidationError as exc:
            raise errors.ValidationFailed(
                "The password is too weak: " + " ".join(exc.messages),
                details={"field": "password"},
            ) from exc
    if user is None:
        validate_slug(username)
        if Workspace.objects.filter(slug=username).exists():
            raise errors.Conflict(
                f"A workspace named '{username}' already exists; choose another username.",
                details={"username": username},
            )
        user = user_model.objects.create_user(username=username, email=email, password=password)
    elif password and not user.check_password(password):
        # Only a changed password is set again: a new hash would sign out every session.
        user.set_password(password)
        user.save(update_fields=["password"])
    personal_workspace_ensure(user=user)
    return user


def personal_workspace(user: User) -> Workspace | None:
    """The workspace of kind personal the user owns, if there is one yet."""
    return (
        Workspace.objects.filter(
            kind=Workspace.Kind.PERSONAL,
            memberships__user=user,
            memberships__role=Membership.Role.OWNER,
        )
        .order_by("pk")
        .first()
    )


def _free_personal_slug(username: str) -> str:
    """The username when it is a valid, free slug; else a slug made from it, numbered if taken."""
    base = slug_from_name(username)
    candidates = [username] if username == base else []
    candidates += [base] + [
        f"{base[: SLUG_MAX - len(str(n)) - 1].rstrip('-')}-{n}" for n in range(2, 1000)
    ]
    taken = set(Workspace.objects.filter(slug__in=candidates).values_list("slug", flat=True))
    for slug in candidates:
        if slug not in taken:
            return slug
    return f"{base[: SLUG_MAX - 13].rstrip('-')}-{secrets.token_hex(6)}"


@transaction.atomic
def personal_workspace_ensure(*, user: User) -> Workspace:
    """Give ``user`` their personal workspace unless they have one (docs/contract.md §2: one per
    user, however the user comes to exist). Idempotent; the slug is the username when it can be."""
    existing = personal_workspace(user)
    if existing is not None:
        return existing
    username = user.get_username()
    workspace = Workspace.objects.create(
        slug=_free_personal_slug(username),
        name=f"{username} (personal)"[:200],
        kind=Workspace.Kind.PERSONAL,
        created_by=user,
    )
    Membership.objects.create(workspace=workspace, user=user, role=Membership.Role.OWNER)
    audit_record(
        actor=Actor(user=user, via="system"),
        workspace=workspace,
        action="workspace.create",
        target_type="workspace",
        target_id=workspace.slug,
        data={"kind": Workspace.Kind.PERSONAL},
    )
    return workspace


@transaction.atomic
def user_store(*, user: User) -> User:
    """Save a new user built elsewhere (the Django admin's add form) with their personal
    workspace, in one transaction (docs/contract.md §2: however the user comes to exist)."""
    user.save()
    personal_workspace_ensure(user=user)
    return user


@transaction.atomic
def personal_workspaces_ensure_since(*, after_pk: int) -> list[Workspace]:
    """The personal workspace of every user whose primary key is above ``after_pk``: for users
    made by code this project does not own (Django's ``createsuperuser``, run through
    ``management/commands/createsuperuser.py``). Idempotent."""
    users = get_user_model().objects.filter(pk__gt=after_pk).order_by("pk")
    return [personal_workspace_ensure(user=user) for user in users]


def user_last_pk() -> int:
    """The highest user primary key so far (0 with no user), the mark for
    :func:`personal_workspaces_ensure_since`."""
    last = get_user_model().objects.order_by("-pk").values_list("pk", flat=True).first()
    return int(last or 0)


@transaction.atomic
def user_delete(*, actor: Actor, user: User) -> None:
    """Delete an account (staff, in the Django admin): its memberships, tokens and OAuth
    consents go with it; the workspaces, their skills and the audit log stay."""
    if not actor.system:
        raise errors.PermissionDenied("Only staff delete accounts.")
    user.delete()


def workspace_create(*, actor: Actor, slug: str, name: str) -> Workspace:
    """Create a team workspace; the caller becomes its owner."""
    require_scope(actor, "workspace:admin")
    require_unrestricted(actor, "create workspaces")
    if actor.user is None:
        raise errors.PermissionDenied("Only a user can own a workspace.")
    validate_slug(slug)
    name = workspace_name_clean(name)
    try:
        with transaction.atomic():
            workspace = Workspace.objects.create(
                slug=slug, name=name, kind=Workspace.Kind.TEAM, created_by=actor.user
            )
            Membership.objects.create(
                workspace=workspace, user=actor.user, role=Membership.Role.OWNER
            )
            audit_record(
                actor=actor,
                workspace=workspace,
                action="workspace.create",
                target_type="workspace",
                target_id=slug,
            )
    except IntegrityError as exc:
        raise errors.Conflict(
            f"The workspace slug '{slug}' is taken.", details={"slug": slug}
        ) from exc
    return workspace


def _team_admin(actor: Actor, workspace: Workspace) -> str:
    require_scope(actor, "workspace:admin")
    if workspace.is_personal:
        raise errors.ValidationFailed(
            "A personal workspace has exactly one member, its owner.",
            details={"workspace": workspace.slug},
        )
    return require_role(actor, workspace, ADMIN_ROLES)


def _check_role_value(role: str) -> None:
    if role not in ROLES:
        raise errors.ValidationFailed(
            f"role must be one of {', '.join(ROLES)}.", details={"field": "role"}
        )


def _owner_count(workspace: Workspace) -> int:
    return Membership.objects.filter(workspace=workspace, role=Membership.Role.OWNER).count()


@transaction.atomic
def membership_add(*, actor: Actor, workspace: Workspace, username: str, role: str) -> Membership:
    my_role = _team_admin(actor, workspace)
    _check_role_value(role)
    if role == "owner" and my_role != "owner":
        raise errors.PermissionDenied("Only an owner can add another owner.")
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise errors.NotFound(f"User '{username}' was not found.", details={"username": username})
    membership, created = Membership.objects.get_or_create(
        workspace=workspace, user=user, defaults={"role": role}
    )
    if not created:
        raise errors.Conflict(f"'{username}' is already a member.", details={"username": username})
    audit_record(
        actor=actor,
        workspace=workspace,
        action="workspace.member.add",
        target_type="user",
        target_id=username,
        data={"role": role},
    )
    return membership


def _membership(workspace: Workspace, username: str) -> Membership:
    membership = (
        Membership.objects.select_for_update()
        .select_related("user")
        .filter(workspace=workspace, user__username=username)
        .first()
    )
    if membership is None:
        raise errors.NotFound(f"'{username}' is not a member.", details={"username": username})
    return membership


@transaction.atomic
def membership_change(
    *, actor: Actor, workspace: Workspace, username: str, role: str
) -> Membership:
    my_role = _team_admin(actor, workspace)
    _check_role_value(role)
    membership = _membership(workspace, username)
    if "owner" in (role, membership.role) and my_role != "owner":
        raise errors.PermissionDenied("Only an owner can grant or take away the owner role.")
    if membership.role == "owner" and role != "owner" and _owner_count(workspace) == 1:
        raise errors.Conflict("A team needs at least one owner.")
    old = membership.role
    membership.role = role
    membership.save(update_fields=["role"])
    audit_record(
        actor=actor,
        workspace=workspace,
        action="workspace.member.change",
        target_type="user",
        target_id=username,
        data={"from": old, "to": role},
    )
    return membership


@transaction.atomic
def membership_remove(*, actor: Actor, workspace: Workspace, username: str) -> None:
    my_role = _team_admin(actor, workspace)
    membership = _membership(workspace, username)
    if membership.role == "owner":
        if my_role != "owner":
            raise errors.PermissionDenied("Only an owner can remove an owner.")
        if _owner_count(workspace) == 1:
            raise errors.Conflict("A team needs at least one owner.")
    membership.delete()
    audit_record(
        actor=actor,
        workspace=workspace,
        action="workspace.member.remove",
        target_type="user",
        target_id=username,
    )


def _require_within_parent(
    parent: ApiToken,
    *,
    scopes: list[str],
    workspace: Workspace | None,
    profile: str,
    expires_at: datetime | None,
) -> None:
    """A token made with a token is bounded by it (docs/contract.md §2): scopes ⊆, the same
    workspace restriction, an expiry no later, and a client profile that exposes no more MCP
    tools."""
    if "workspace:admin" not in (parent.scopes or []):
        raise errors.PermissionDenied(
            "This token lacks the 'workspace:admin' scope.",
            details={"required_scope": "workspace:admin"},
        )
    unknown_grant = set(scopes) - set(parent.scopes or [])
    if unknown_grant:
        raise errors.PermissionDenied(
            "A token cannot create a token with scopes it does not have.",
            details={"field": "scopes", "scopes": sorted(unknown_grant)},
        )
    restricted_to = parent.workspace_id
    if restricted_to is not None and (workspace is None or workspace.pk != restricted_to):
        raise errors.PermissionDenied(
            "A token restricted to one workspace can only create tokens restricted to it.",
            details={"field": "workspace"},
        )
    if parent.expires_at is not None and (expires_at is None or expires_at > parent.expires_at):
        raise errors.PermissionDenied(
            "A token that expires can only create tokens that expire no later: "
            f"set expires_at to {parent.expires_at.isoformat()} or earlier.",
            details={"field": "expires_at", "latest": parent.expires_at.isoformat()},
        )
    extra_tools = set(exposed_tools(profile)) - set(exposed_tools(parent.client_profile))
    # Prompts and resources too (docs/contract.md §18): "exposes no more" covers all of MCP.
    extra_tools |= exposed_surfaces(profile) - exposed_surfaces(parent.client_profile)
    if extra_tools:
        raise errors.PermissionDenied(
            f"The profile '{profile}' exposes MCP tools, prompts or resources this token's "
            f"profile '{parent.client_profile}' does not.",
            details={"field": "profile", "tools": sorted(extra_tools)},
        )


def _within_oauth_access(parent: ApiToken, expires_at: datetime | None) -> datetime | None:
    """The expiry of a token made with ``parent``: a token acting for an OAuth access token
    mints tokens that expire no later than that access token (docs/contract.md §16b) — none
    asked for means exactly then, a later one is refused."""
    latest = parent.oauth_access_expires
    if latest is None:
        return expires_at
    if expires_at is None:
        return latest
    if expires_at > latest:
        raise errors.ValidationFailed(
            "A token made with an OAuth access token expires no later than it: "
            f"set expires_at to {latest.isoformat()} or earlier, or leave it out.",
            details={"field": "expires_at", "latest": latest.isoformat()},
        )
    return expires_at


WORKSPACE_TOKEN_ROLES = ("member", "admin")


def _workspace_token_check(actor: Actor, workspace: Workspace | None, role: str) -> Workspace:
    """A token owned by a team (docs/contract.md §16): made by its owners and admins, with the role
    member or admin there (never owner: a token cannot manage who owns the team)."""
    if workspace is None:
        raise errors.ValidationFailed(
            "A workspace token needs the workspace that owns it.", details={"field": "workspace"}
        )
    if role not in WORKSPACE_TOKEN_ROLES:
        raise errors.ValidationFailed(
            f"A workspace token's role is one of {', '.join(WORKSPACE_TOKEN_ROLES)}.",
            details={"field": "role"},
        )
    require_workspace_admin(actor, workspace)
    if workspace.is_personal:
        raise errors.ValidationFailed(
            "Workspace tokens belong to teams; in a personal workspace use your own token.",
            details={"field": "workspace"},
        )
    return workspace


@transaction.atomic
def _token_mode(actor: Actor, mode: str) -> str:
    """A new token's own permission mode: as given (checked), never looser than its maker's."""
    if mode:
        permission_mode_check(mode)
    parent = actor.token.permission_mode if actor.token is not None else ""
    if parent and stricter_mode(parent, mode) != (mode or parent):
        raise errors.PermissionDenied(
            f"A token made with a token is at least as strict as it: permission mode {parent}.",
            details={"field": "permission_mode", "limit": parent},
        )
    return mode or parent


def token_create(
    *,
    actor: Actor,
    user: User,
    name: str,
    scopes: list[str],
    workspace: Workspace | None = None,
    profile: str = DEFAULT_PROFILE,
    expires_at: datetime | None = None,
    role: str = "",
    permission_mode: str = "",
) -> tuple[ApiToken, str]:
    """Create a token; returns it with its secret, which is never retrievable again.
    ``permission_mode`` makes its scripts' rule stricter than its workspace's (never looser
    than the token that makes it).

    With a ``role`` the token is owned by ``workspace`` (a service account of the team) and
    ``user`` is only who created it.
    """
    if role:
        _workspace_token_check(actor, workspace, role)
    minted_through = None
    if actor.token is not None:
        expires_at = _within_oauth_access(actor.token, expires_at)
        minted_through = (
            actor.token if actor.token.oauth_access_expires else actor.token.minted_through
        )
        _require_within_parent(
            actor.token, scopes=scopes, workspace=workspace, profile=profile, expires_at=expires_at
        )
    permission_mode = _token_mode(actor, permission_mode)
    name = name_check(name.strip(), field="name", limit=TOKEN_NAME_MAX, what="A token name")
    bad = [s for s in scopes if s not in SCOPES]
    if bad or not scopes:
        raise errors.ValidationFailed(
            f"scopes must be a non-empty subset of {', '.join(SCOPES)}.",
            details={"field": "scopes", "invalid": bad},
        )
    if profile not in profile_names():
        raise errors.ValidationFailed(
            f"Unknown client profile '{profile}'.", details={"field": "profile"}
        )
    if expires_at is not None and expires_at <= timezone.now():
        raise errors.ValidationFailed(
            "expires_at must be in the future.", details={"field": "expires_at"}
        )
    if workspace is not None and actor.role_in(workspace) is None:
        raise errors.NotFound("Workspace not found.", details={"workspace": workspace.slug})
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        name=name,
        prefix=secret[:10],
        secret_hash=token_hash(secret),
        scopes=sorted(set(scopes), key=SCOPES.index),
        workspace=workspace,
        client_profile=profile,
        expires_at=expires_at,
        role=role,
        minted_through=minted_through,
        permission_mode=permission_mode,
    )
    audit_workspace = workspace or personal_workspace_ensure(user=user)
    audit_record(
        actor=actor,
        workspace=audit_workspace,
        action="token.create",
        target_type="token",
        target_id=token.token_id,
        data={
            "name": name,
            "scopes": token.scopes,
            "profile": profile,
            **({"owner": "workspace", "role": role} if role else {}),
        },
    )
    return token, secret


@transaction.atomic
def token_revoke(*, actor: Actor, token: ApiToken) -> ApiToken:
    if actor.token is not None:
        require_scope(actor, "workspace:admin")
        require_unrestricted(actor, "revoke its user's tokens")
    if token.owned_by_workspace and token.workspace is not None:
        require_workspace_admin(actor, token.workspace)  # the team's, whoever made it
    elif actor.user is None or token.user_id != actor.user.pk:
        raise errors.NotFound("Token not found.", details={"token_id": token.token_id})
    _revoke(actor, token)
    # Revoking an OAuth connection's consent revokes every token minted through it. Each row is
    # saved, so this process's verified-token cache forgets it now and others at their next
    # request (gateway/auth.py).
    for minted in ApiToken.objects.select_for_update().filter(
        minted_through=token, revoked_at__isnull=True
    ):
        _revoke(actor, minted, data={"minted_through": token.token_id})
    return token


def _revoke(actor: Actor, token: ApiToken, data: dict[str, str] | None = None) -> None:
    if token.revoked_at is not None:
        return
    token.revoked_at = timezone.now()
    token.save(update_fields=["revoked_at"])
    audit_record(
        actor=actor,
        workspace=token.workspace or personal_workspace_ensure(user=token.user),
        action="token.revoke",
        target_type="token",
        target_id=token.token_id,
        data=data,
    )
