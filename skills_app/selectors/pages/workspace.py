"""The view models of a workspace's admin pages (``console/views/admin.py`` renders them): who
sees what is the selector's rule, not the view's."""

from __future__ import annotations

from dataclasses import dataclass

from skills_app.access import ADMIN_ROLES, Actor
from skills_app.models import ApiToken, Invitation, Membership, Workspace
from skills_app.selectors.accounts import tokens_listed, workspace_members
from skills_app.selectors.invitations import invitations_pending


@dataclass(frozen=True)
class MembersPage:
    """The members, and the pending invitations for those who may invite (none otherwise)."""

    members: list[Membership]
    invitations: list[Invitation]


def members_page(*, actor: Actor, workspace: Workspace) -> MembersPage:
    members = list(workspace_members(actor=actor, workspace=workspace))
    admin = actor.role_in(workspace) in ADMIN_ROLES
    return MembersPage(
        members=members,
        invitations=list(invitations_pending(actor=actor, workspace=workspace)) if admin else [],
    )


@dataclass(frozen=True)
class TokensPage:
    """The caller's own tokens, and the tokens the team owns for its owners and admins."""

    tokens: list[ApiToken]
    workspace_tokens: list[ApiToken]


def tokens_page(*, actor: Actor, workspace: Workspace) -> TokensPage:
    admin = actor.role_in(workspace) in ADMIN_ROLES
    return TokensPage(
        tokens=list(tokens_listed(actor=actor)),
        workspace_tokens=list(tokens_listed(actor=actor, workspace=workspace)) if admin else [],
    )
