"""An API call with a bearer token and no cookie goes around the console's session, sign-in and
message middleware (``skills_app/ops/console_middleware.py``); everything with a cookie, and
every page, still goes through them, and CSRF still sees every request."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth import middleware as auth_middleware
from django.contrib.messages import middleware as messages_middleware
from django.contrib.sessions import middleware as sessions_middleware
from django.test import Client

from skills_app.models import Workspace
from tests.api.conftest import error_code
from tests.factories import Env, make_token, personal_ws, publish

pytestmark = pytest.mark.django_db

CONSOLE: dict[str, Any] = {
    "session": sessions_middleware.SessionMiddleware,
    "user": auth_middleware.AuthenticationMiddleware,
    "messages": messages_middleware.MessageMiddleware,
}


@pytest.fixture
def ran(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Which of the console's middleware prepared the request, in order."""
    seen: list[str] = []
    for name, cls in CONSOLE.items():
        original = cls.process_request

        def counted(self: Any, request: Any, _name: str = name, _original: Any = original) -> Any:
            seen.append(_name)
            return _original(self, request)

        monkeypatch.setattr(cls, "process_request", counted)
    return seen


def _bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def test_a_bearer_call_without_cookies_goes_around_them(env: Env, ran: list[str]) -> None:
    publish(env.owner, personal_ws(env.owner))
    _, secret = make_token(env.owner)
    client = Client()
    assert client.get("/v1/recall?slug=deploy", headers=_bearer(secret)).status_code == 200
    listed = client.get("/v1/workspaces", headers=_bearer(secret))  # a DRF view: its own user
    assert listed.status_code == 200
    assert ran == []


@pytest.mark.parametrize("path", ["/v1/recall?slug=deploy", "/v1/workspaces"])
def test_any_cookie_takes_them_as_before(env: Env, ran: list[str], path: str) -> None:
    publish(env.owner, personal_ws(env.owner))
    _, secret = make_token(env.owner)
    client = Client()
    client.cookies["theme"] = "dark"
    assert client.get(path, headers=_bearer(secret)).status_code == 200
    assert ran == ["session", "user", "messages"]


def test_pages_and_calls_without_a_bearer_token_take_them(env: Env, ran: list[str]) -> None:
    _, secret = make_token(env.owner)
    Client().get("/signin", headers=_bearer(secret))  # a page, even with a token
    Client().get("/v1/workspaces", headers={"Authorization": f"Basic {secret}"})
    assert ran == ["session", "user", "messages"] * 2


def test_a_signed_in_session_still_works_and_still_needs_csrf(env: Env) -> None:
    """The console's own calls to the API carry the session cookie: signed in, and refused
    without the CSRF token — also when a bearer header rides along with the cookie."""
    env.owner.set_password("pw")
    env.owner.save()
    client = Client(enforce_csrf_checks=True)
    assert client.login(username=env.owner.username, password="pw")
    assert client.get("/v1/workspaces").status_code == 200
    for headers in ({}, {"Authorization": "Bearer not-a-token"}):
        answer = client.post(
            "/v1/workspaces",
            json.dumps({"slug": "csrf-made", "name": "x"}),
            content_type="application/json",
            headers=headers,
        )
        assert answer.status_code in (401, 403), answer.content[:200]
        assert error_code(answer) in ("PERMISSION_DENIED", "AUTHENTICATION_REQUIRED")
    assert not Workspace.objects.filter(slug="csrf-made").exists()
