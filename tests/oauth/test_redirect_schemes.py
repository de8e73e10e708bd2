"""Plaintext ``http`` redirect URIs are for native clients' loopback callbacks only (RFC 8252).

``http`` stays in ``ALLOWED_REDIRECT_URI_SCHEMES`` for ``http://127.0.0.1:PORT/…`` and
``http://[::1]:PORT/…``; any other plaintext redirect would let an open registration send
authorization codes over the network in the clear (RFC 9700 §2.1).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from oauth2_provider.models import Application

from skills_app.oauth.redirects import plaintext_off_loopback
from tests.api.conftest import _fresh_caches  # noqa: F401  (autouse)
from tests.factories import make_user
from tests.oauth.test_oauth_flow import Flow, _nothing_stored, register

pytestmark = pytest.mark.django_db

PLAINTEXT = [
    "http://attacker.example/cb",
    "http://localhost:8765/cb",  # ALLOW_LOCALHOST_LOOPBACK is off: a name, not loopback
    "http://127.0.0.1.attacker.example/cb",
    "http://10.0.0.5:8080/cb",
]
ACCEPTED = [
    "http://127.0.0.1:53682/callback",
    "http://127.0.0.1/callback",
    "http://[::1]:8765/cb",
    "https://client.example/oauth/callback",
]


@pytest.fixture
def client() -> Client:
    """Registration is an API call without a CSRF token; the checks stay on to prove it."""
    return Client(enforce_csrf_checks=True)


def _registration(uris: list[str]) -> dict[str, Any]:
    return {
        "client_name": "Agent",
        "redirect_uris": uris,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }


@pytest.mark.parametrize("uri", PLAINTEXT)
def test_registering_a_plaintext_non_loopback_redirect_is_refused(client: Client, uri: str) -> None:
    response = client.post(
        "/oauth/register/",
        _registration(["http://127.0.0.1/callback", uri]),
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_redirect_uri"
    assert uri in response.json()["error_description"]
    assert not Application.objects.exists()


@pytest.mark.parametrize("uri", ACCEPTED)
def test_loopback_and_https_redirects_register(client: Client, uri: str) -> None:
    client_id = register(client, redirect_uris=[uri])
    assert Application.objects.get(client_id=client_id).redirect_uris == uri


def test_updating_a_registration_to_a_plaintext_redirect_is_refused(client: Client) -> None:
    created = client.post(
        "/oauth/register/",
        _registration(["http://127.0.0.1/callback"]),
        content_type="application/json",
    ).json()
    response = client.put(
        created["registration_client_uri"],
        _registration(["http://attacker.example/cb"]),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {created['registration_access_token']}",
    )
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_redirect_uri"
    assert Application.objects.get().redirect_uris == "http://127.0.0.1/callback"


def test_the_admin_refuses_a_plaintext_redirect() -> None:
    client = Client()
    admin = User.objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(admin)
    response = client.post(
        "/admin/oauth2_provider/application/add/",
        {
            "client_id": "admin-made",
            "redirect_uris": "http://attacker.example/cb",
            "post_logout_redirect_uris": "",
            "allowed_origins": "",
            "client_type": "public",
            "authorization_grant_type": "authorization-code",
            "client_secret": "",
            "name": "Admin made",
            "algorithm": "",
            "registration_source": "manual",
        },
    )
    assert response.status_code == 200  # the form again, with the error
    assert "redirect_uris" in response.context["adminform"].form.errors
    assert not Application.objects.exists()


def test_authorizing_to_a_stored_plaintext_redirect_is_refused(client: Client) -> None:
    """Defence in depth: a row written before the rule (or by hand) is not honoured."""
    user = make_user("olga")
    flow = Flow(client, user, register(client))
    Application.objects.filter(client_id=flow.client_id).update(
        redirect_uris="http://attacker.example/cb"
    )
    page = flow.authorize_page(redirect_uri="http://attacker.example/cb")
    assert page.status_code == 400
    assert "Location" not in page
    assert page.context["error"].error == "invalid_request"
    _nothing_stored(user)


def test_a_stored_plaintext_redirect_is_not_used_as_the_default(client: Client) -> None:
    """A request naming no redirect URI falls back to the registered one: the same rule."""
    user = make_user("olga")
    flow = Flow(client, user, register(client))
    Application.objects.filter(client_id=flow.client_id).update(
        redirect_uris="http://attacker.example/cb"
    )
    page = flow.authorize_page(redirect_uri=None)
    assert page.status_code == 400
    assert "Location" not in page
    _nothing_stored(user)


def test_localhost_counts_as_loopback_only_when_the_library_setting_says_so(settings: Any) -> None:
    uri = "http://localhost:8765/cb"
    assert plaintext_off_loopback([uri]) == [uri]
    settings.OAUTH2_PROVIDER = {**settings.OAUTH2_PROVIDER, "ALLOW_LOCALHOST_LOOPBACK": True}
    assert plaintext_off_loopback([uri]) == []
