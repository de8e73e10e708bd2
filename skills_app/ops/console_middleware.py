"""The console's session, sign-in and message middleware, which an API call made with a bearer
token and no cookie goes around.

Such a call can carry no session, so there is nothing for them to load, save or sign: reading
the session, making ``request.user`` and preparing message storage cost Level 1 about 30 µs of
the ~200 Django spends on it in process (docs/benchmarks.md). Any cookie, and any request not
to ``/v1/`` or without a bearer token, takes them as before. CSRF protection is not among them:
``CsrfViewMiddleware`` still sees every request (an attack needs a cookie anyway)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import middleware as auth_middleware
from django.contrib.messages import middleware as messages_middleware
from django.contrib.sessions import middleware as sessions_middleware
from django.http import HttpRequest

from skills_app.domain.tokens import bearer_secret
from skills_app.gateway.errors import is_api_path


def token_only(request: HttpRequest) -> bool:
    """An API call with a bearer token and no cookie (an empty ``Cookie`` header is none)."""
    meta = request.META
    return (
        not meta.get("HTTP_COOKIE")
        and bearer_secret(meta.get("HTTP_AUTHORIZATION", "")) is not None
        and is_api_path(request)
    )


class _ConsoleOnly:
    """Mixed into a ``MiddlewareMixin`` middleware: it is not run for ``token_only`` calls."""

    async_mode: bool
    get_response: Any

    def __call__(self, request: HttpRequest) -> Any:
        if not self.async_mode and token_only(request):
            return self.get_response(request)
        return super().__call__(request)  # type: ignore[misc]

    async def __acall__(self, request: HttpRequest) -> Any:
        if token_only(request):
            return await self.get_response(request)
        return await super().__acall__(request)  # type: ignore[misc]


class SessionMiddleware(_ConsoleOnly, sessions_middleware.SessionMiddleware):
    pass


class AuthenticationMiddleware(_ConsoleOnly, auth_middleware.AuthenticationMiddleware):
    pass


class MessageMiddleware(_ConsoleOnly, messages_middleware.MessageMiddleware):
    pass
