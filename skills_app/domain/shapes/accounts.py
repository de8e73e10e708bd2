"""Workspaces and who may act in them: members, invitations, tokens, labels, secrets, the audit
log and notification preferences (docs/contract.md §7, §16)."""

from typing import Annotated, TypedDict

from skills_app.domain.shapes.fields import (
    DateTime,
    Doc,
    JSONObject,
    OneOf,
    PermissionMode,
    Role,
    Scope,
    WorkspaceKind,
)

INVITATION_STATES = ("pending", "accepted", "revoked", "expired")
TOKEN_OWNERS = ("user", "workspace")


class Workspace(TypedDict):
    slug: str
    name: str
    kind: WorkspaceKind
    role: str | None
    cloud_skills_enabled: bool
    require_distinct_reviewer: bool
    allow_dangerous_scripts: bool
    required_approvals: int
    permission_mode: PermissionMode | None
    created_at: DateTime


class Label(TypedDict):
    name: str
    revision_id: str
    revision_number: int
    moved_by: str | None
    moved_at: DateTime


class Secret(TypedDict):
    name: str
    created_at: DateTime
    updated_at: DateTime


class Member(TypedDict):
    username: str
    role: Role
    created_at: DateTime


class Invitation(TypedDict):
    id: str
    email: str
    role: Role
    state: Annotated[str, OneOf(INVITATION_STATES)]
    invited_by: str | None
    created_at: DateTime
    expires_at: DateTime


class Token(TypedDict):
    token_id: str
    name: str
    prefix: str
    scopes: list[Scope]
    workspace: str | None
    profile: str
    expires_at: DateTime | None
    created_at: DateTime
    last_used_at: DateTime | None
    revoked_at: DateTime | None
    owner: Annotated[str, OneOf(TOKEN_OWNERS)]
    role: str | None
    permission_mode: PermissionMode | None
    created_by: str | None


class TokenCreated(TypedDict):
    token_id: str
    token: Annotated[str, Doc("The bearer secret. Shown only in this answer.")]
    name: str
    scopes: list[Scope]
    workspace: str | None
    profile: str
    expires_at: DateTime | None
    created_at: DateTime
    owner: Annotated[str, OneOf(TOKEN_OWNERS)]
    role: str | None
    permission_mode: PermissionMode | None


class Audit(TypedDict):
    action: str
    actor: str | None
    target_type: str
    target_id: str
    data: JSONObject
    ip: str | None
    via: str
    created_at: DateTime


class Notifications(TypedDict):
    review_requests: bool
    review_outcomes: bool
    comments: bool
