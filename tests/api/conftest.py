from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client

from skills_app.gateway.auth import clear_token_cache
from skills_app.gateway.ratelimit import limiter
from skills_app.infra.cache import clear_local
from tests.factories import ALL_SCOPES, make_token


def reset_api_caches() -> None:
    clear_token_cache()
    clear_local()
    limiter.reset()
    cache.clear()


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    """Process-wide caches must not carry one test's tokens or content into the next."""
    reset_api_caches()
    yield
    reset_api_caches()


class Api:
    """A test client that sends one bearer token (or none) with every request."""

    def __init__(self, client: Client, secret: str | None) -> None:
        self.client = client
        self.secret = secret

    def _headers(self, extra: dict[str, str] | None) -> dict[str, str]:
        headers = dict(extra or {})
        if self.secret is not None:
            headers.setdefault("Authorization", f"Bearer {self.secret}")
        return headers

    def get(self, path: str, params: dict[str, Any] | None = None, **headers: str) -> Any:
        return self.client.get(path, params or {}, headers=self._headers(headers))

    def post(self, path: str, body: Any = None, **headers: str) -> Any:
        return self.client.post(
            path,
            json.dumps({} if body is None else body),
            content_type="application/json",
            headers=self._headers(headers),
        )

    def patch(self, path: str, body: Any = None, **headers: str) -> Any:
        return self.client.patch(
            path,
            json.dumps({} if body is None else body),
            content_type="application/json",
            headers=self._headers(headers),
        )

    def put(self, path: str, body: Any = None, **headers: str) -> Any:
        return self.client.put(
            path,
            json.dumps({} if body is None else body),
            content_type="application/json",
            headers=self._headers(headers),
        )

    def delete(self, path: str, **headers: str) -> Any:
        return self.client.delete(path, headers=self._headers(headers))


ApiFactory = Callable[..., Api]


@pytest.fixture
def api_for() -> ApiFactory:
    """``api_for(user, scopes=[…], workspace=ws, expires_at=…)`` → a client with a new token."""

    def make(user: User, scopes: list[str] | None = None, **kwargs: Any) -> Api:
        _, secret = make_token(user, scopes or ALL_SCOPES, **kwargs)
        return Api(Client(), secret)

    return make


def error_code(response: Any) -> str:
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "details"}, body
    assert isinstance(body["error"]["message"], str)
    assert body["error"]["message"]
    assert isinstance(body["error"]["details"], dict)
    return str(body["error"]["code"])
