"""Workspace tokens in the console: admins make and revoke them on the tokens page."""

from __future__ import annotations

from django.test import Client
from django.urls import reverse

from skills_app.models import ApiToken, AuditEntry
from tests.factories import Env


def test_owner_makes_lists_and_revokes_a_team_token(
    owner_client: Client, member_client: Client, env: Env
) -> None:
    page = reverse("console:tokens", args=(env.team.slug,))
    made = owner_client.post(
        page,
        {
            "name": "deploy-bot",
            "scopes": ["skills:read"],
            "owner": "member",
            "profile": "ordinary-full",
        },
    )
    assert made.status_code == 201, made.content
    token = ApiToken.objects.get(name="deploy-bot")
    assert (token.role, token.workspace) == ("member", env.team)
    listed = owner_client.get(page).content.decode()
    assert 'data-testid="workspace-tokens"' in listed
    assert "deploy-bot" in listed.split('data-testid="workspace-tokens"')[1]
    # A member neither sees the team's tokens nor may make one.
    assert b"deploy-bot" not in member_client.get(page).content
    refused = member_client.post(
        page,
        {"name": "mine", "scopes": ["skills:read"], "owner": "admin", "profile": "ordinary-full"},
    )
    assert refused.status_code == 403
    assert not ApiToken.objects.filter(name="mine").exists()
    revoke = reverse("console:token_revoke", args=(env.team.slug, token.token_id))
    assert member_client.post(revoke).status_code == 404
    owner_client.post(revoke)
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert AuditEntry.objects.filter(
        workspace=env.team, action="token.revoke", target_id=token.token_id
    ).exists()


def test_a_token_made_in_the_console_may_carry_a_stricter_permission_mode(
    owner_client: Client, env: Env
) -> None:
    """Contract §21: ``permission_mode`` on a token makes its scripts' rule stricter; the token
    page offers it (left empty: the workspace's mode alone)."""
    page = reverse("console:tokens", args=(env.team.slug,))
    shown = owner_client.get(page).content.decode()
    assert 'name="permission_mode"' in shown
    form = {"scopes": ["skills:execute"], "restrict": "on", "profile": "ordinary-full"}
    made = owner_client.post(page, {**form, "name": "careful", "permission_mode": "read-only"})
    assert made.status_code == 201, made.content
    assert ApiToken.objects.get(name="careful").permission_mode == "read-only"
    plain = owner_client.post(page, {**form, "name": "plain"})
    assert plain.status_code == 201, plain.content
    assert ApiToken.objects.get(name="plain").permission_mode == ""
