"""A token made with a token is bounded by it (docs/contract.md §2): the attacks that used to
escape."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from skills_app.mcp_profiles import DEFAULT_PROFILE, exposed_tools, profile_names
from skills_app.models import ApiToken, Workspace
from tests.api.conftest import ApiFactory, error_code
from tests.factories import ALL_SCOPES, Env, make_token


def test_a_workspace_restricted_token_cannot_list_other_tokens(
    env: Env, api_for: ApiFactory
) -> None:
    make_token(env.owner, name="laptop")
    restricted = api_for(env.owner, scopes=ALL_SCOPES, workspace=env.team)
    answer = restricted.get("/v1/tokens")
    assert answer.status_code == 403, answer.content
    assert error_code(answer) == "PERMISSION_DENIED"


def test_a_workspace_restricted_token_cannot_revoke_other_tokens(
    env: Env, api_for: ApiFactory
) -> None:
    other, _ = make_token(env.owner, name="laptop")
    restricted = api_for(env.owner, scopes=ALL_SCOPES, workspace=env.team)
    answer = restricted.delete(f"/v1/tokens/{other.token_id}")
    assert answer.status_code == 403, answer.content
    assert ApiToken.objects.get(pk=other.pk).revoked_at is None


def test_a_workspace_restricted_token_cannot_create_a_workspace(
    env: Env, api_for: ApiFactory
) -> None:
    restricted = api_for(env.owner, scopes=ALL_SCOPES, workspace=env.team)
    answer = restricted.post("/v1/workspaces", {"slug": "escaped", "name": "Escaped"})
    assert answer.status_code == 403, answer.content
    assert not Workspace.objects.filter(slug="escaped").exists()


def test_an_unrestricted_token_still_manages_tokens_and_workspaces(
    env: Env, api_for: ApiFactory
) -> None:
    other, _ = make_token(env.owner, name="laptop")
    full = api_for(env.owner)
    assert full.get("/v1/tokens").status_code == 200
    assert full.delete(f"/v1/tokens/{other.token_id}").status_code == 204
    assert full.post("/v1/workspaces", {"slug": "fine", "name": "Fine"}).status_code == 201


def test_a_short_lived_token_cannot_mint_a_never_expiring_one(
    env: Env, api_for: ApiFactory
) -> None:
    parent_expiry = timezone.now() + timedelta(seconds=20)
    short = api_for(env.owner, expires_at=parent_expiry)
    forever = short.post("/v1/tokens", {"name": "forever", "scopes": ["skills:read"]})
    assert forever.status_code == 403, forever.content
    later = short.post(
        "/v1/tokens",
        {
            "name": "later",
            "scopes": ["skills:read"],
            "expires_at": (parent_expiry + timedelta(days=1)).isoformat(),
        },
    )
    assert later.status_code == 403, later.content
    assert error_code(later) == "PERMISSION_DENIED"
    sooner = short.post(
        "/v1/tokens",
        {
            "name": "sooner",
            "scopes": ["skills:read"],
            "expires_at": (parent_expiry - timedelta(seconds=5)).isoformat(),
        },
    )
    assert sooner.status_code == 201, sooner.content
    assert not ApiToken.objects.filter(name__in=["forever", "later"]).exists()


def test_a_token_cannot_mint_a_token_with_a_wider_profile(env: Env, api_for: ApiFactory) -> None:
    names = profile_names()
    wider = [
        (parent, child)
        for parent in names
        for child in names
        if set(exposed_tools(child)) - set(exposed_tools(parent))
    ]
    assert ("generic-public", "ordinary-full") in wider
    for parent, child in wider:
        narrow = api_for(env.owner, profile=parent)
        answer = narrow.post(
            "/v1/tokens", {"name": "wider", "scopes": ["skills:read"], "profile": child}
        )
        assert answer.status_code == 403, (parent, child, answer.content)
        assert answer.json()["error"]["details"]["field"] == "profile"
    assert not ApiToken.objects.filter(name="wider").exists()


def test_a_generic_public_token_may_mint_an_equally_narrow_profile(
    env: Env, api_for: ApiFactory
) -> None:
    narrow = api_for(env.owner, profile="generic-public")
    answer = narrow.post(
        "/v1/tokens", {"name": "same", "scopes": ["skills:read"], "profile": "generic-public"}
    )
    assert answer.status_code == 201, answer.content
    # chatgpt-public sees no tools but the skill resources (SPEC §20): more.
    resources = narrow.post(
        "/v1/tokens", {"name": "reader", "scopes": ["skills:read"], "profile": "chatgpt-public"}
    )
    assert resources.status_code == 403
    assert resources.json()["error"]["details"]["tools"] == ["resources"]
    # claude-code sees no tools either, but prompts and resources (docs/contract.md §18): more.
    wider = narrow.post(
        "/v1/tokens", {"name": "wider", "scopes": ["skills:read"], "profile": "claude-code"}
    )
    assert wider.status_code == 403
    assert wider.json()["error"]["details"]["tools"] == ["prompts", "resources"]


def test_the_default_profile_is_one_of_the_contract() -> None:
    assert DEFAULT_PROFILE in profile_names()
