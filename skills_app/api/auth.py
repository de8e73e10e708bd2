"""The REST door's authentication: DRF's adapter over ``gateway.auth`` (the one token check,
with its verified-token cache), and the ``Actor`` of a request (bearer token, else the console
session)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from django.http import HttpRequest
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from skills_app import errors
from skills_app.access import Actor
from skills_app.domain.tokens import bearer_secret
from skills_app.gateway.auth import actor_for_secret, authenticate_secret, client_ip
from skills_app.gateway.errors import WWW_AUTHENTICATE
from skills_app.models import ApiToken
from skills_app.oauth.resource import request_origin

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def _bearer(request: HttpRequest) -> str | None:
    return bearer_secret(request.META.get("HTTP_AUTHORIZATION", ""))


def actor_for_request(request: HttpRequest | Request) -> Actor:
    """The one ``Actor`` of this request (built once, kept on the request)."""
    django_request: HttpRequest = getattr(request, "_request", request)
    actor: Actor | None = getattr(django_request, "_xmemo_actor", None)
    if actor is not None:
        return actor
    auth = getattr(request, "auth", None)
    user = getattr(request, "user", None)
    if isinstance(auth, ApiToken):
        actor = Actor(user=user, token=auth, via="api", ip=client_ip(django_request))
    elif user is not None and user.is_authenticated:
        actor = Actor(user=user, token=None, via="console", ip=client_ip(django_request))
    else:
        raise errors.AuthenticationRequired()
    django_request._xmemo_actor = actor  # type: ignore[attr-defined]
    return actor


def authenticate_lean(request: HttpRequest) -> Actor:
    """Authentication for views outside DRF: bearer token, else the console session."""
    secret = _bearer(request)
    if secret is not None:
        actor = actor_for_secret(
            secret, via="api", origin=partial(request_origin, request), ip=client_ip(request)
        )
    else:
        session_user = getattr(request, "user", None)
        if session_user is None or not session_user.is_authenticated:
            raise errors.AuthenticationRequired()
        actor = Actor(user=session_user, token=None, via="console", ip=client_ip(request))
    request._xmemo_actor = actor  # type: ignore[attr-defined]
    return actor


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """DRF authentication class: ``Authorization: Bearer xm_…``."""

    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[User, ApiToken] | None:
        secret = _bearer(request._request)
        if secret is None:
            return None
        try:
            return authenticate_secret(secret, origin=partial(request_origin, request._request))
        except errors.AuthenticationRequired as exc:
            raise exceptions.AuthenticationFailed(exc.message) from exc

    def authenticate_header(self, request: Request) -> str:
        return WWW_AUTHENTICATE
