"""Unauthenticated OAuth endpoints are no free work (docs/contract.md §16b): registration and the
token endpoint are rate-limited per client address, a registration holds at most 10 redirect
URIs, and clients never used expire."""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import Application

from skills_app.gateway.auth import client_ip as client_address
from skills_app.tasks import expire_oauth_clients
from tests.api.conftest import _fresh_caches  # noqa: F401  (autouse)
from tests.oauth.test_oauth_flow import CALLBACK, Flow, register
from tests.oauth.test_oauth_flow import user as user  # fixture
from tests.support import run_task

pytestmark = pytest.mark.django_db


def _register(client: Client, **extra: Any) -> Any:
    body = {
        "client_name": "Agent",
        "redirect_uris": [CALLBACK],
        "grant_types": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_method": "none",
    }
    return client.post("/oauth/register/", body, content_type="application/json", **extra)


def _assert_rate_limited(response: Any) -> None:
    assert response.status_code == 429, response.content
    body = response.json()
    assert body["error"]["code"] == "RATE_LIMITED"
    assert 1 <= int(response["Retry-After"]) <= 60
    assert body["error"]["details"]["retry_after"] == int(response["Retry-After"])


def test_the_eleventh_registration_in_a_minute_answers_429(client: Client) -> None:
    answers = [_register(client).status_code for _ in range(11)]
    assert answers == [201] * 10 + [429]
    _assert_rate_limited(_register(client))
    assert Application.objects.count() == 10
    # Another address has a budget of its own.
    assert _register(client, REMOTE_ADDR="203.0.113.9").status_code == 201


def test_a_forwarded_for_header_is_not_believed_by_default(client: Client) -> None:
    for n in range(10):
        assert _register(client, HTTP_X_FORWARDED_FOR=f"198.51.100.{n}").status_code == 201
    _assert_rate_limited(_register(client, HTTP_X_FORWARDED_FOR="198.51.100.200"))


def test_behind_a_trusted_proxy_the_forwarded_address_counts(client: Client, settings: Any) -> None:
    settings.XMEMO_TRUSTED_PROXIES = ["127.0.0.1", "10.0.0.0/8"]
    for _ in range(10):
        assert _register(client, HTTP_X_FORWARDED_FOR="198.51.100.7, 10.1.2.3").status_code == 201
    _assert_rate_limited(_register(client, HTTP_X_FORWARDED_FOR="198.51.100.7"))
    # What the client itself put in front of the chain is not believed either.
    assert _register(client, HTTP_X_FORWARDED_FOR="198.51.100.7, 198.51.100.8").status_code == 201


def test_client_address_takes_the_last_untrusted_hop(rf: Any, settings: Any) -> None:
    request = rf.get("/", REMOTE_ADDR="10.0.0.5", HTTP_X_FORWARDED_FOR="1.2.3.4, 5.6.7.8, 10.0.0.9")
    assert client_address(request) == "10.0.0.5"
    settings.XMEMO_TRUSTED_PROXIES = ["10.0.0.0/8"]
    assert client_address(request) == "5.6.7.8"
    junk = rf.get("/", REMOTE_ADDR="10.0.0.5", HTTP_X_FORWARDED_FOR="not-an-ip")
    assert client_address(junk) == "10.0.0.5"


def test_eleven_redirect_uris_are_refused_and_nothing_stored(client: Client) -> None:
    uris = [f"http://127.0.0.1:{8000 + n}/callback" for n in range(11)]
    refused = client.post(
        "/oauth/register/",
        {"client_name": "Many", "redirect_uris": uris, "token_endpoint_auth_method": "none"},
        content_type="application/json",
    )
    assert refused.status_code == 400
    assert refused.json()["error"] == "invalid_redirect_uri"
    assert "10" in refused.json()["error_description"]
    assert not Application.objects.exists()
    accepted = client.post(
        "/oauth/register/",
        {"client_name": "Ten", "redirect_uris": uris[:10], "token_endpoint_auth_method": "none"},
        content_type="application/json",
    )
    assert accepted.status_code == 201


def test_the_token_endpoint_answers_429_past_its_limit(client: Client, settings: Any) -> None:
    settings.XMEMO_RATE_LIMIT_OAUTH_TOKEN = "3/min"
    client_id = register(client)
    data = {"grant_type": "authorization_code", "code": "nope", "client_id": client_id}
    answers = [Client().post("/oauth/token/", data).status_code for _ in range(3)]
    assert answers == [400] * 3
    _assert_rate_limited(Client().post("/oauth/token/", data))


def test_a_public_client_costs_no_slow_secret_hash(client: Client, settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    client_id = register(client)
    application = Application.objects.get(client_id=client_id)
    assert application.client_type == "public"
    assert application.client_secret == ""  # nothing hashed, nothing to leak: it never sends one


def test_a_public_client_added_in_the_admin_has_no_secret_either(client: Client) -> None:
    admin = get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(admin)
    response = client.post(
        "/admin/oauth2_provider/application/add/",
        {
            "client_id": "admin-made",
            "redirect_uris": "http://127.0.0.1/callback",
            "post_logout_redirect_uris": "",
            "allowed_origins": "",
            "client_type": "public",
            "authorization_grant_type": "authorization-code",
            "client_secret": "typed-in-by-staff",
            "hash_client_secret": "on",
            "name": "Admin made",
            "algorithm": "",
            "registration_source": "manual",
        },
    )
    assert response.status_code == 302, response.content.decode()[-2000:]
    application = Application.objects.get(client_id="admin-made")
    assert (application.client_secret, application.hash_client_secret) == ("", False)


def test_a_confidential_client_is_answered_its_secret_once_and_stores_only_a_hash(
    client: Client,
) -> None:
    answer = client.post(
        "/oauth/register/",
        {
            "client_name": "Server agent",
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "client_secret_basic",
        },
        content_type="application/json",
    )
    assert answer.status_code == 201, answer.content
    body = answer.json()
    application = Application.objects.get(client_id=body["client_id"])
    assert application.client_type == "confidential"
    assert body["client_secret"]
    assert body["registration_access_token"]
    assert application.client_secret != body["client_secret"]
    assert check_password(body["client_secret"], application.client_secret)


def test_expiry_removes_unused_clients_and_keeps_used_and_fresh_ones(
    client: Client, user: Any, settings: Any
) -> None:
    settings.XMEMO_OAUTH_UNUSED_CLIENT_HOURS = 24
    unused = register(client)
    used = register(client)
    Flow(client, user, used).connect()
    fresh = register(client)
    old = timezone.now() - timedelta(hours=25)
    Application.objects.filter(client_id__in=[unused, used]).update(created=old)
    assert run_task(expire_oauth_clients) == 1  # the periodic task, as a worker runs it
    assert set(Application.objects.values_list("client_id", flat=True)) == {used, fresh}
    call_command("expire_oauth_clients", stdout=io.StringIO())  # idempotent, the command too
    assert set(Application.objects.values_list("client_id", flat=True)) == {used, fresh}
