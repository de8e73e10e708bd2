"""Sign-in throttling: django-axes, for the sign-ins that come over HTTP."""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.http import HttpRequest, HttpResponse

from .base import error_page


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
