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
