"""The REST door's throttle: DRF's adapter over the one per-token rate limit
(``gateway.ratelimit``), which MCP tool calls share."""

from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from skills_app import errors
from skills_app.gateway.ratelimit import check_rate
from skills_app.models import ApiToken


class TokenRateThrottle(BaseThrottle):
    """DRF throttle class around ``check_rate``."""

    def __init__(self) -> None:
        self._wait: float | None = None

    def allow_request(self, request: Request, view: Any) -> bool:
        auth = request.auth if isinstance(request.auth, ApiToken) else None
        try:
            check_rate(auth, request.user)
        except errors.RateLimited as exc:
            self._wait = float(exc.details["retry_after"])
            return False
        return True

    def wait(self) -> float | None:
        return self._wait
