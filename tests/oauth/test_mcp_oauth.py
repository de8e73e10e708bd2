"""Acceptance: the MCP SDK's own OAuth client connects without a pasted secret (docs/contract.md
§12).

Against a live uvicorn server, ``OAuthClientProvider`` discovers the authorization server from a
bare 401, registers itself (RFC 7591), and sends a real headless Chromium, signed in to the
console as the user, to the consent page; the user picks a workspace, scopes and a profile and
approves; the client exchanges the code (PKCE S256) and then sees exactly the profile's tools
and the same Level 1 answer REST gives for the same access token.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import httpx2
import pytest
from django.db import connection as db
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from oauth2_provider.models import AccessToken
from playwright.async_api import Route, async_playwright

from skills_app.access import Actor
from skills_app.gateway.auth import clear_token_cache
from skills_app.mcp_profiles import tools_for_profile
from skills_app.models import OAuthConnection
from skills_app.services.accounts import token_revoke
from tests.console.test_browser import CHROMIUM, CHROMIUM_ARGS, PASSWORD
from tests.factories import let_authors_approve, make_team, make_user, personal_ws, publish
from tests.mcp.conftest import (  # noqa: F401  (fixture)
    bearer,
    live_url,
    rest,
    tool_answer,
    with_mcp,
)
from tests.mcp.test_skills_extension import ext
from tests.support import require_service

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser, pytest.mark.services]

CALLBACK = "http://127.0.0.1:47123/callback"
RECALL = "recall_cloud_skill"


class MemoryStorage:
    """The SDK's TokenStorage protocol, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class BrowserConsent:
    """The person at the browser: signs in to the console, then approves on the consent page."""

    def __init__(self, base_url: str, username: str, choices: dict[str, Any]) -> None:
        self.base_url = base_url
        self.username = username
        self.choices = choices
        self.callback: str | None = None
        self.consent_text = ""

    async def redirect(self, authorization_url: str) -> None:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = await (await browser.new_context(base_url=self.base_url)).new_page()
                page.set_default_timeout(15_000)

                async def capture(route: Route) -> None:
                    self.callback = route.request.url
                    await route.fulfill(status=200, body="You can close this window.")

                await page.route(f"{CALLBACK}**", capture)
                await page.goto(authorization_url)  # not signed in: the console's login first
                await page.fill("input[name=username]", self.username)
                await page.fill("input[name=password]", PASSWORD)
                await page.click("button.primary")
                await page.wait_for_selector("[data-testid=oauth-consent]")
                self.consent_text = await page.inner_text("[data-testid=oauth-consent]")
                await page.select_option("select[name=workspace]", self.choices["workspace"])
                await page.select_option("select[name=profile]", self.choices["profile"])
                for box in await page.query_selector_all("input[name=scopes]"):
                    value = await box.get_attribute("value")
                    await box.set_checked(value in self.choices["scopes"])
                await page.click("[data-testid=approve]")
                await page.wait_for_url(f"{CALLBACK}**")
            finally:
                await browser.close()

    async def code(self) -> AuthorizationCodeResult:
        assert self.callback is not None, "the browser never came back to the client"
        query = parse_qs(urlsplit(self.callback).query)
        assert "error" not in query, query
        return AuthorizationCodeResult(
            code=query["code"][0], state=query["state"][0], iss=query["iss"][0]
        )


def _user(name: str) -> Any:
    user = make_user(name)
    user.set_password(PASSWORD)
    user.save()
    return user


def test_sdk_oauth_client_connects_through_console_consent(live_url: str) -> None:  # noqa: F811
    require_service("Chromium", os.path.exists(CHROMIUM), f"no browser at {CHROMIUM}")
    user = _user("oscar")
    ws = personal_ws(user)
    publish(user, ws, slug="deploy", instruction_body="# Deploy\n\nShip it.\n")
    other = make_team(user, slug="oscar-team")
    let_authors_approve(other)
    publish(user, other, slug="team-only")

    # Discovery starts from a bare 401.
    bare = httpx.post(f"{live_url}/mcp", json={}, timeout=10)
    assert bare.status_code == 401
    assert bare.headers["www-authenticate"] == (
        f'Bearer resource_metadata="{live_url}/.well-known/oauth-protected-resource/mcp"'
    )

    profile = "cursor-plugin"
    person = BrowserConsent(
        live_url,
        user.username,
        {"workspace": ws.slug, "profile": profile, "scopes": ["skills:read"]},
    )
    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=f"{live_url}/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="Test Agent",
            redirect_uris=[CALLBACK],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=person.redirect,
        callback_handler=person.code,
    )

    async def session() -> tuple[list[str], Any, Any]:
        async with httpx2.AsyncClient(auth=provider, timeout=30) as http:
            transport = streamable_http_client(f"{live_url}/mcp", http_client=http)
            async with Client(transport) as client:
                tools = [tool.name for tool in (await client.list_tools()).tools]
                recalled = await client.call_tool(RECALL, {"slug": "deploy"})
                elsewhere = await client.call_tool(RECALL, {"slug": "oscar-team/team-only"})
                return tools, recalled, elsewhere

    tools, recalled, elsewhere = anyio.run(session)

    assert "Test Agent" in person.consent_text
    assert "127.0.0.1" in person.consent_text
    assert tools == tools_for_profile(profile)
    assert storage.tokens is not None
    assert storage.tokens.refresh_token
    access = storage.tokens.access_token
    assert not access.startswith("xm_")
    level1 = rest(live_url, access, "GET", "/v1/recall", params={"slug": "deploy"})
    assert level1.status_code == 200
    assert recalled.structured_content == level1.json()
    assert level1.json()["data"]["instruction_body"] == "# Deploy\n\nShip it.\n"
    # Restricted at consent to the personal workspace: the team is not there for this token.
    assert elsewhere.is_error
    assert tool_answer("recall_cloud_skill", elsewhere)["error"]["code"] == "NOT_FOUND"
    connection = OAuthConnection.objects.select_related("api_token").get(user=user)
    token = connection.api_token
    assert (token.scopes, token.workspace_id, token.client_profile) == (
        ["skills:read"],
        ws.pk,
        profile,
    )
    assert token.last_used_at is not None

    # On /mcp too: a token whose audience is moved elsewhere is refused at once (the cached
    # verification is dropped by the table's NOTIFY), and revoking the consent ends access.
    def mcp_status() -> int:
        return httpx.post(
            f"{live_url}/mcp", headers=bearer(access), json={}, timeout=10
        ).status_code

    def move_audience(resource: str) -> None:
        AccessToken.objects.update(resource=[resource])
        if db.vendor != "postgresql":
            # No NOTIFY off PostgreSQL: there a token changed by plain SQL is seen anew once its
            # cached verification ages out (XMEMO_AUTH_CACHE_SECONDS, gateway/auth.py), as here.
            clear_token_cache()

    move_audience("https://other.example/mcp")
    assert mcp_status() == 401
    move_audience(f"{live_url}/mcp")
    assert [t.name for t in with_mcp(live_url, access, lambda c: c.list_tools()).tools] == tools
    # The Skills extension through the same access token, in both protocol revisions (§20).
    for mode in ("legacy", "2026-07-28"):
        listed = with_mcp(live_url, access, lambda c: ext(c, "skills/list"), mode)
        assert [e["uri"] for e in listed["skills"]] == [f"skill://{ws.slug}/deploy/SKILL.md"]
    token_revoke(actor=Actor(user=user), token=token)
    assert mcp_status() == 401
