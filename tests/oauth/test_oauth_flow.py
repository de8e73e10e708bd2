"""OAuth 2.1 for MCP clients (docs/contract.md §12) through Django's test client: discovery,
registration, the consent page, the token endpoint, and what the tokens may do on ``/v1/`` —
including every bad input the OAuth RFCs name an error for, each storing nothing (but an audit entry
where a workspace is concerned)."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import AccessToken, Grant, RefreshToken
from oauth2_provider.settings import oauth2_settings

from skills_app.models import ApiToken, AuditEntry, OAuthConnection
from tests.api.conftest import _fresh_caches  # noqa: F401  (autouse)
from tests.factories import let_authors_approve, make_team, make_user, personal_ws, publish

pytestmark = pytest.mark.django_db

ORIGIN = "http://testserver"
RESOURCE = f"{ORIGIN}/mcp"
CALLBACK = "http://127.0.0.1/callback"


def issued() -> Any:
    """Access tokens issued to clients (registration leaves an RFC 7592 management token)."""
    return AccessToken.objects.exclude(scope=oauth2_settings.DCR_REGISTRATION_SCOPE)


def _pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    return verifier, challenge.decode().rstrip("=")


def register(client: Client, **overrides: Any) -> str:
    body = {
        "client_name": "Agent",
        "redirect_uris": [CALLBACK],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **overrides,
    }
    response = client.post("/oauth/register/", body, content_type="application/json")
    assert response.status_code == 201, response.content
    return str(response.json()["client_id"])


class Flow:
    """One client's authorization as a signed-in user."""

    def __init__(self, client: Client, user: User, client_id: str) -> None:
        self.client = client
        self.user = user
        self.client_id = client_id
        self.verifier, self.challenge = _pkce()
        client.force_login(user)

    def params(self, **overrides: Any) -> dict[str, Any]:
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": CALLBACK,
            "state": "st4te",
            "code_challenge": self.challenge,
            "code_challenge_method": "S256",
            "resource": RESOURCE,
            "scope": "skills:read skills:write",
        }
        params.update(overrides)
        return {k: v for k, v in params.items() if v is not None}

    def authorize_page(self, **overrides: Any) -> Any:
        return self.client.get(f"/oauth/authorize/?{urlencode(self.params(**overrides))}")

    def consent(self, *, allow: bool = True, **choices: Any) -> dict[str, list[str]]:
        """Approve (or deny) on the consent page; the query the client is sent back with."""
        page = self.authorize_page()
        assert page.status_code == 200, page.content
        form = page.context["form"]
        data = {name: form[name].value() or "" for name in form.fields}
        data.update(
            scopes=choices.get("scopes", ["skills:read", "skills:write"]),
            workspace=choices.get("workspace", ""),
            profile=choices.get("profile", "ordinary-full"),
        )
        data.pop("allow")
        if allow:
            data["allow"] = "on"
        response = self.client.post("/oauth/authorize/", data)
        assert response.status_code == 302, response.content
        location = urlsplit(response["Location"])
        assert f"{location.scheme}://{location.netloc}{location.path}" == CALLBACK
        return parse_qs(location.query)

    def token(self, **data: Any) -> Any:
        return Client().post("/oauth/token/", {"client_id": self.client_id, **data})

    def exchange(self, code: str, **overrides: Any) -> Any:
        data = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": CALLBACK,
            "code_verifier": self.verifier,
            **overrides,
        }
        return self.token(**{k: v for k, v in data.items() if v is not None})

    def connect(self, **choices: Any) -> dict[str, Any]:
        query = self.consent(**choices)
        response = self.exchange(query["code"][0])
        assert response.status_code == 200, response.content
        return dict(response.json())


def call(secret: str, path: str, method: str = "get", **kwargs: Any) -> Any:
    return getattr(Client(), method)(path, HTTP_AUTHORIZATION=f"Bearer {secret}", **kwargs)


@pytest.fixture
def user() -> User:
    user = make_user("olga")
    publish(user, personal_ws(user), slug="deploy")
    return user


@pytest.fixture
def flow(client: Client, user: User) -> Flow:
    return Flow(client, user, register(client))


# --- discovery -------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["", "/mcp"])
def test_protected_resource_metadata_names_this_server(client: Client, suffix: str) -> None:
    body = client.get(f"/.well-known/oauth-protected-resource{suffix}").json()
    assert body["resource"] == ORIGIN + suffix
    assert body["authorization_servers"] == [ORIGIN]
    assert "skills:read" in body["scopes_supported"]


def test_authorization_server_metadata_offers_only_code_with_s256(client: Client) -> None:
    body = client.get("/.well-known/oauth-authorization-server").json()
    assert body["issuer"] == ORIGIN
    assert body["authorization_endpoint"] == f"{ORIGIN}/oauth/authorize/"
    assert body["token_endpoint"] == f"{ORIGIN}/oauth/token/"
    assert body["registration_endpoint"] == f"{ORIGIN}/oauth/register/"
    assert body["code_challenge_methods_supported"] == ["S256"]
    assert body["response_types_supported"] == ["code"]
    assert set(body["grant_types_supported"]) == {"authorization_code", "refresh_token"}
    assert body["authorization_response_iss_parameter_supported"] is True


def test_rest_401_is_unchanged_and_consent_needs_a_signed_in_user(client: Client) -> None:
    client_id = register(client)
    response = client.get(f"/oauth/authorize/?client_id={client_id}&response_type=code")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


# --- the happy path on /v1/ -------------------------------------------------------------------


def test_access_token_acts_as_the_consented_api_token_on_rest(flow: Flow, user: User) -> None:
    team = make_team(user, slug="olga-team")
    let_authors_approve(team)  # a team of one
    publish(user, team, slug="team-only")
    tokens = flow.connect(scopes=["skills:read"], workspace=user.username, profile="cursor-plugin")
    assert tokens["token_type"] == "Bearer"
    assert tokens["refresh_token"]
    assert 0 < tokens["expires_in"] <= 3600
    access = tokens["access_token"]
    level1 = call(access, "/v1/recall", data={"slug": "deploy"})
    assert level1.status_code == 200
    assert level1.json()["data"]["slug"] == "deploy"
    # Consent restricted it to the personal workspace: the team answers 404, as for API tokens.
    assert call(access, "/v1/recall", data={"slug": "olga-team/team-only"}).status_code == 404
    # Consent gave read only: saving is refused with the API's scope error.
    saved = call(
        access,
        "/v1/skills/save",
        "post",
        data={"workspace": user.username, "slug": "x"},
        content_type="application/json",
    )
    assert saved.status_code == 403
    assert saved.json()["error"]["code"] == "PERMISSION_DENIED"
    token = OAuthConnection.objects.get(user=user).api_token
    assert token.last_used_at is not None
    assert AuditEntry.objects.filter(action="oauth.consent.approve", target_id=token.token_id)


def test_the_redirect_names_the_issuer_rfc_9207(flow: Flow) -> None:
    query = flow.consent()
    assert query["iss"] == [ORIGIN]
    assert query["state"] == ["st4te"]


def test_loopback_redirect_on_any_port_is_accepted(flow: Flow) -> None:
    page = flow.authorize_page(redirect_uri="http://127.0.0.1:50123/callback")
    assert page.status_code == 200
    assert b"127.0.0.1" in page.content


def test_reconsent_replaces_the_connection_and_its_tokens(flow: Flow, user: User) -> None:
    first = flow.connect(scopes=["skills:read", "skills:write"])
    flow.verifier, flow.challenge = _pkce()
    second = flow.connect(scopes=["skills:read"])
    assert call(first["access_token"], "/v1/recall", data={"slug": "deploy"}).status_code == 401
    assert call(second["access_token"], "/v1/recall", data={"slug": "deploy"}).status_code == 200
    assert OAuthConnection.objects.get(user=user).api_token.scopes == ["skills:read"]


# --- bad input: the authorization endpoint ------------------------------------------------------


def _nothing_stored(user: User) -> None:
    assert not ApiToken.objects.filter(user=user).exists()
    assert not Grant.objects.exists()
    assert not issued().exists()
    assert not OAuthConnection.objects.exists()


def test_unknown_client_is_refused_without_redirecting(flow: Flow, user: User) -> None:
    page = flow.authorize_page(client_id="no-such-client")
    assert page.status_code == 400
    assert page.context["error"].error == "invalid_request"
    assert b"no-such-client" not in page.get("Location", "").encode()
    _nothing_stored(user)


def test_unregistered_redirect_uri_is_refused_without_redirecting(flow: Flow, user: User) -> None:
    page = flow.authorize_page(redirect_uri="https://evil.example/callback")
    assert page.status_code == 400
    assert "Location" not in page
    assert page.context["error"].error == "invalid_request"
    _nothing_stored(user)


@pytest.mark.parametrize(
    ("overrides", "error"),
    [
        ({"code_challenge": None, "code_challenge_method": None}, "invalid_request"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"resource": "https://other.example/mcp"}, "invalid_target"),
        ({"scope": "skills:read admin:everything"}, "invalid_scope"),
    ],
)
def test_bad_authorization_requests_redirect_with_the_named_error(
    flow: Flow, user: User, overrides: dict[str, Any], error: str
) -> None:
    page = flow.authorize_page(**overrides)
    assert page.status_code == 302
    query = parse_qs(urlsplit(page["Location"]).query)
    assert query["error"] == [error]
    assert query["state"] == ["st4te"]
    _nothing_stored(user)


def test_denied_consent_answers_access_denied_and_is_audited(flow: Flow, user: User) -> None:
    query = flow.consent(allow=False, workspace=user.username)
    assert query["error"] == ["access_denied"]
    _nothing_stored(user)
    entry = AuditEntry.objects.get(action="oauth.consent.refuse")
    assert entry.workspace.slug == user.username
    assert entry.data["error"] == "access_denied"


def test_scope_wider_than_the_role_is_invalid_scope_and_audited(client: Client) -> None:
    owner, member = make_user("owen"), make_user("mia")
    team = make_team(owner, slug="crew", members={member: "member"})
    flow = Flow(client, member, register(client))
    query = flow.consent(scopes=["skills:read", "workspace:admin"], workspace=team.slug)
    assert query["error"] == ["invalid_scope"]
    _nothing_stored(member)
    entry = AuditEntry.objects.get(action="oauth.consent.refuse", workspace=team)
    assert entry.data["error"] == "invalid_scope"


def test_a_workspace_the_user_is_not_in_cannot_be_chosen(flow: Flow, user: User) -> None:
    stranger_team = make_team(make_user("sam"), slug="elsewhere")
    page = flow.authorize_page()
    form = page.context["form"]
    data = {name: form[name].value() or "" for name in form.fields}
    data.update(scopes=["skills:read"], workspace=stranger_team.slug, profile="ordinary-full")
    data["allow"] = "on"
    response = flow.client.post("/oauth/authorize/", data)
    assert response.status_code == 400  # not a choice offered to this user
    _nothing_stored(user)
    assert not AuditEntry.objects.filter(workspace=stranger_team).exists()


# --- bad input: the token endpoint ---------------------------------------------------------------


def test_wrong_or_missing_pkce_verifier_is_refused(flow: Flow, user: User) -> None:
    code = flow.consent()["code"][0]
    wrong = flow.exchange(code, code_verifier=_pkce()[0])
    assert wrong.status_code == 400
    assert wrong.json()["error"] == "invalid_grant"
    assert not issued().exists()


def test_missing_pkce_verifier_is_refused(flow: Flow) -> None:
    code = flow.consent()["code"][0]
    missing = flow.exchange(code, code_verifier=None)
    assert missing.status_code == 400
    assert missing.json()["error"] == "invalid_request"
    assert not issued().exists()


def test_a_code_works_once(flow: Flow) -> None:
    code = flow.consent()["code"][0]
    assert flow.exchange(code).status_code == 200
    again = flow.exchange(code)
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"
    assert issued().count() == 1


def test_an_expired_code_is_refused(flow: Flow) -> None:
    code = flow.consent()["code"][0]
    Grant.objects.update(expires=timezone.now() - timedelta(seconds=1))
    expired = flow.exchange(code)
    assert expired.status_code == 400
    assert expired.json()["error"] == "invalid_grant"
    assert not issued().exists()


def test_unknown_client_at_the_token_endpoint(flow: Flow) -> None:
    code = flow.consent()["code"][0]
    flow.client_id = "no-such-client"
    response = flow.exchange(code)
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"
    assert not issued().exists()


# --- tokens in use ------------------------------------------------------------------------------


def test_a_token_for_another_audience_is_refused(flow: Flow) -> None:
    access = flow.connect()["access_token"]
    AccessToken.objects.update(resource=["https://other.example/mcp"])
    response = call(access, "/v1/recall", data={"slug": "deploy"})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "AUTHENTICATION_REQUIRED"


def test_an_expired_access_token_is_refused(flow: Flow) -> None:
    access = flow.connect()["access_token"]
    AccessToken.objects.update(expires=timezone.now() - timedelta(seconds=1))
    assert call(access, "/v1/recall", data={"slug": "deploy"}).status_code == 401


def test_refresh_rotates_and_a_replay_revokes_the_family(flow: Flow, user: User) -> None:
    first = flow.connect(workspace=user.username)
    rotated = flow.token(grant_type="refresh_token", refresh_token=first["refresh_token"])
    assert rotated.status_code == 200
    second = rotated.json()
    assert second["refresh_token"] != first["refresh_token"]
    assert call(second["access_token"], "/v1/recall", data={"slug": "deploy"}).status_code == 200
    replay = flow.token(grant_type="refresh_token", refresh_token=first["refresh_token"])
    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"
    # The whole family is gone: the live access token and the newest refresh token too.
    assert call(second["access_token"], "/v1/recall", data={"slug": "deploy"}).status_code == 401
    later = flow.token(grant_type="refresh_token", refresh_token=second["refresh_token"])
    assert later.json()["error"] == "invalid_grant"
    assert not RefreshToken.objects.filter(revoked__isnull=True).exists()
    replays = AuditEntry.objects.filter(action="oauth.refresh.replay")
    assert replays.exists()
    assert {entry.workspace.slug for entry in replays} == {user.username}


def test_revoking_on_the_tokens_page_ends_access_and_refresh(flow: Flow, user: User) -> None:
    tokens = flow.connect()
    access = tokens["access_token"]
    assert call(access, "/v1/recall", data={"slug": "deploy"}).status_code == 200  # now cached
    page = flow.client.get(f"/w/{user.username}/tokens/")
    assert b"connected application" in page.content
    assert b"Agent" in page.content
    token = OAuthConnection.objects.get(user=user).api_token
    revoked = flow.client.post(f"/w/{user.username}/tokens/{token.token_id}/revoke/")
    assert revoked.status_code == 302
    assert call(access, "/v1/recall", data={"slug": "deploy"}).status_code == 401
    refresh = flow.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
    assert refresh.status_code == 400
    assert refresh.json()["error"] == "invalid_grant"


def test_an_xm_secret_path_is_unchanged_for_non_oauth_strings() -> None:
    response = call("not-a-token-at-all", "/v1/recall", data={"slug": "deploy"})
    assert response.status_code == 401


def test_consent_page_says_what_each_profile_exposes(flow: Flow) -> None:
    """Issue 25 #18: the consent page offered profiles as bare names; picking `claude-code`
    or `chatgpt-public` connected a client that sees no tool. Each option says what it
    exposes, and the preselected one exposes the tools."""
    page = flow.authorize_page().content.decode()
    options = dict(re.findall(r'<option value="([^"]+)"[^>]*>([^<]+)</option>', page))
    assert options["claude-code"] == "claude-code — no MCP tools; use the REST API / bridge"
    assert options["chatgpt-public"] == "chatgpt-public — no MCP tools; use the REST API / bridge"
    assert options["ordinary-full"] == (
        "ordinary-full — MCP tools: recall_cloud_skill (read), save_cloud_skill (write),"
        " report_skill_outcome (read)"
    )
    assert re.search(r'<option value="ordinary-full"[^>]*selected', page)


def test_consent_leaves_powerful_scopes_unchecked_and_calls_them_out(flow: Flow) -> None:
    """Issue 37 #13: the consent page pre-checked every scope the client asked for, so one
    click granted `workspace:admin`. The ordinary scopes asked for start checked; the powerful
    ones (`workspace:admin`, `skills:review`, `skills:execute`) start unchecked, each named
    with what it allows; approving as shown grants only the ordinary ones."""
    asked = "skills:read skills:write skills:review skills:execute workspace:admin"
    page = flow.authorize_page(scope=asked)
    html = page.content.decode()
    checked = set(re.findall(r'<input[^>]*value="([^"]+)"[^>]*checked', html))
    assert checked == {"skills:read", "skills:write"}
    callout = html[html.index('data-testid="powerful-scopes"') :]
    callout = callout[: callout.index("</div>")]
    for scope in ("workspace:admin", "skills:review", "skills:execute"):
        assert scope in callout
    assert page.context["form"].initial["scopes"] == ["skills:read", "skills:write"]


def test_consent_for_only_powerful_scopes_starts_with_read(flow: Flow) -> None:
    """A client asking for `workspace:admin` alone gets nothing pre-checked but read."""
    page = flow.authorize_page(scope="workspace:admin")
    assert page.context["form"].initial["scopes"] == ["skills:read"]
    assert 'data-testid="powerful-scopes"' in page.content.decode()
