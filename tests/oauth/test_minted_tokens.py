"""An OAuth client cannot turn its short-lived access token into a permanent API token
(docs/contract.md §2, §16b): a token minted with an access token expires no later than it, and
revoking the connection revokes every token minted through it."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from skills_app.models import ApiToken, OAuthConnection
from skills_app.services.accounts import token_revoke
from tests.api.conftest import _fresh_caches  # noqa: F401  (autouse)
from tests.api.conftest import api_for as api_for  # fixture
from tests.factories import actor_for
from tests.oauth.test_oauth_flow import Flow, call, issued, register
from tests.oauth.test_oauth_flow import user as user  # fixture

pytestmark = pytest.mark.django_db

ADMIN = ["skills:read", "workspace:admin"]


@pytest.fixture
def access(client: Client, user: User) -> str:
    flow = Flow(client, user, register(client))
    return str(flow.connect(scopes=ADMIN, workspace="")["access_token"])


def _mint(access: str, **body: Any) -> Any:
    return call(
        access,
        "/v1/tokens",
        "post",
        data={"name": "minted", "scopes": ["skills:read"], **body},
        content_type="application/json",
    )


def test_a_token_minted_without_expiry_expires_with_the_access_token(access: str) -> None:
    minted = _mint(access)
    assert minted.status_code == 201, minted.content
    access_expires = issued().get().expires
    expires_at = parse_datetime(minted.json()["expires_at"])
    assert expires_at is not None
    assert expires_at <= access_expires
    assert expires_at > timezone.now() + timedelta(minutes=50)


def test_a_later_expiry_than_the_access_tokens_is_refused(access: str) -> None:
    before = ApiToken.objects.count()
    later = (timezone.now() + timedelta(days=30)).isoformat()
    refused = _mint(access, expires_at=later)
    assert refused.status_code == 400, refused.content
    body = refused.json()["error"]
    assert body["code"] == "VALIDATION_ERROR"
    assert body["details"]["field"] == "expires_at"
    assert parse_datetime(body["details"]["latest"]) == issued().get().expires
    assert ApiToken.objects.count() == before


def test_a_token_minted_by_a_minted_token_is_bounded_and_revoked_with_the_connection(
    access: str, user: User
) -> None:
    first = _mint(access, scopes=ADMIN).json()
    # A minted token bounds its own mints as any expiring token does (an expiry no later).
    assert _mint(first["token"]).status_code == 403
    second = _mint(first["token"], expires_at=first["expires_at"])
    assert second.status_code == 201, second.content
    consent = OAuthConnection.objects.get(user=user).api_token
    token_revoke(actor=actor_for(user, via="console"), token=consent)
    assert call(second.json()["token"], "/v1/skills").status_code == 401


def test_revoking_the_connection_revokes_what_was_minted_through_it(
    access: str, user: User, client: Client
) -> None:
    minted = _mint(access).json()
    secret = minted["token"]
    # Used once, so it sits in the verified-token cache.
    assert call(secret, "/v1/skills").status_code == 200
    own = ApiToken.objects.create(
        user=user, name="mine", prefix="xm_x", secret_hash="0" * 64, scopes=["skills:read"]
    )
    consent = OAuthConnection.objects.get(user=user).api_token
    client.force_login(user)
    page = client.post(f"/w/{user.username}/tokens/{consent.token_id}/revoke/")
    assert page.status_code == 302
    answer = call(secret, "/v1/skills")
    assert answer.status_code == 401
    assert "revoked" in answer.json()["error"]["message"]
    assert ApiToken.objects.get(token_id=minted["token_id"]).revoked_at is not None
    # A token the person made themselves is not touched.
    own.refresh_from_db()
    assert own.revoked_at is None


def test_revoking_the_connection_over_the_api_revokes_what_was_minted(
    access: str, user: User, api_for: Any
) -> None:
    secret = _mint(access).json()["token"]
    consent = OAuthConnection.objects.get(user=user).api_token
    api = api_for(user)
    assert api.delete(f"/v1/tokens/{consent.token_id}").status_code in (200, 204)
    assert call(secret, "/v1/skills").status_code == 401
