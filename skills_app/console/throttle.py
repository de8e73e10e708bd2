"""Sign-in throttling: django-axes, for the sign-ins that come over HTTP; and the per-address
rate of the unauthenticated endpoints that cost work (``gateway.ratelimit.check_address_rate``)
adapted to the console's pages and the OAuth endpoints' JSON."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase

from skills_app import errors
from skills_app.console.base import error_page
from skills_app.gateway.errors import error_response
from skills_app.gateway.ratelimit import check_address_rate


class LoginThrottleBackend(AxesStandaloneBackend):
    """django-axes' lockout check, skipped when there is no request to throttle.

    Every HTTP sign-in (the console's and the Django admin's login forms) passes its request;
    an ``authenticate`` call without one comes from code on the server itself (a shell, the
    test client's ``login``), where there is no address to lock out and axes would refuse.
    """

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> None:
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)


def lockout_response(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    """``AXES_LOCKOUT_CALLABLE``: the lockout explained in the console's look (429)."""
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return error_page(
        request,
        status=429,
        title="Too many failed sign-ins",
        message=f"Signing in to this account from here is paused for {minutes} minutes after "
        "too many wrong passwords. Try again later, or ask an administrator to reset it.",
    )


View = Callable[..., HttpResponseBase]


def address_limited(action: str, *, json: bool = False) -> Callable[[View], View]:
    """Count every POST to the view against ``action``'s per-address rate, before any work; over
    it, 429 with ``Retry-After``: the error envelope (``json``, the OAuth endpoints) or a page."""

    def wrap(view: View) -> View:
        @wraps(view)
        def limited(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if request.method == "POST":
                try:
                    check_address_rate(action, request)
                except errors.RateLimited as exc:
                    if json:
                        return error_response(exc)
                    page = error_page(
                        request, status=429, title="Too many requests", message=exc.message
                    )
                    page["Retry-After"] = str(exc.details["retry_after"])
                    return page
            return view(request, *args, **kwargs)

        return limited

    return wrap
