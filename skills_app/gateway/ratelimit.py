"""Rate limiting for every door (REST and MCP tool calls share one count), in the Django cache.

A request counts in up to three buckets and is refused when any is full: its token, the person
behind it and the workspace a token is tied to, so more tokens never mean more budget
(docs/contract.md §16b). Fixed windows, counted with ``incr`` in the shared cache; each process
batches its local count (every ``SYNC_SECONDS`` or ``limit // BATCH_DIVISOR`` requests), so a
busy token costs no round trip per request and the overshoot stays bounded (none for small
limits). While Redis is unreachable each process counts alone and asks again after
``RETRY_SECONDS``: limiting degrades, requests are still answered (docs/contract.md §7)."""

from __future__ import annotations

import functools
import logging
import math
import threading
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

from skills_app import errors
from skills_app.domain.rates import rate_parse
from skills_app.gateway.auth import client_ip
from skills_app.models import ApiToken

SYNC_SECONDS = 0.5
RETRY_SECONDS = 1.0
logger = logging.getLogger(__name__)
BATCH_DIVISOR = 100


@functools.lru_cache(maxsize=16)  # read from settings on every request; parsed once
def parse_rate(rate: str | None) -> tuple[int, int] | None:
    """``"6000/min"`` → (6000, 60); None or empty → no limit (``domain/rates.py``)."""
    return rate_parse(rate)


@dataclass
class _Window:
    window: int
    shared: int = 0
    pending: int = 0
    synced_at: float = 0.0


class RateLimiter:
    def __init__(self) -> None:
        self._windows: dict[str, _Window] = {}
        self._lock = threading.Lock()
        self._shared_down_until = 0.0

    def hit(self, key: str, limit: int, period: int) -> float | None:
        """Count one request; None when allowed, else the seconds to wait."""
        now = time.time()
        window = int(now // period)
        batch = max(1, limit // BATCH_DIVISOR)
        with self._lock:
            state = self._windows.get(key)
            if state is None or state.window != window:
                if len(self._windows) > 50_000:
                    self._windows.clear()
                state = self._windows[key] = _Window(window=window)
            state.pending += 1
            must_sync = state.pending >= batch or time.monotonic() - state.synced_at >= SYNC_SECONDS
            if must_sync:
                delta, state.pending = state.pending, 0
        if must_sync:
            shared = self._sync(f"xmemo:throttle:{key}:{window}", delta, period)
            with self._lock:
                if state.window == window:
                    # Without the shared count, this process's own count is the count.
                    state.shared = (
                        state.shared + delta if shared is None else max(state.shared, shared)
                    )
                    state.synced_at = time.monotonic()
        if state.shared + state.pending > limit:
            return max(1.0, math.ceil((window + 1) * period - now))
        return None

    def _sync(self, key: str, delta: int, period: int) -> int | None:
        """The shared count after adding ``delta``; None while the cache is unreachable."""
        if time.monotonic() < self._shared_down_until:
            return None
        try:
            try:
                return int(cache.incr(key, delta))
            except ValueError:
                if cache.add(key, delta, timeout=period + 5):
                    return delta
                return int(cache.incr(key, delta))
        except Exception as exc:  # the cache backend's own errors (redis.ConnectionError, …)
            logger.warning("Shared rate-limit counts unavailable (%s); counting per process", exc)
            self._shared_down_until = time.monotonic() + RETRY_SECONDS
            return None

    def reset(self) -> None:
        with self._lock:
            self._windows.clear()


limiter = RateLimiter()


def _buckets(token: ApiToken | None, user: Any) -> list[tuple[str, str]]:
    """(key, rate setting) of every bucket the request counts in."""
    buckets: list[tuple[str, str]] = []
    if token is not None:
        buckets.append((f"t:{token.token_id}", "XMEMO_RATE_LIMIT"))
        if token.workspace_id is not None:
            buckets.append((f"w:{token.workspace_id}", "XMEMO_RATE_LIMIT_WORKSPACE"))
        if token.owned_by_workspace:
            return buckets
        buckets.append((f"u:{token.user_id}", "XMEMO_RATE_LIMIT_USER"))
    elif user is not None and getattr(user, "is_authenticated", False):
        buckets.append((f"u:{user.pk}", "XMEMO_RATE_LIMIT_USER"))
    return buckets


# Unauthenticated endpoints that cost work, counted per client address (docs/contract.md §16b):
# the action → the setting holding its rate.
ADDRESS_RATES = {
    "oauth_register": "XMEMO_RATE_LIMIT_OAUTH_REGISTER",
    "oauth_token": "XMEMO_RATE_LIMIT_OAUTH_TOKEN",
    "signin": "XMEMO_RATE_LIMIT_SIGNIN",
    "signup": "XMEMO_RATE_LIMIT_SIGNUP",
    "password_reset": "XMEMO_RATE_LIMIT_PASSWORD_RESET",
}


def check_address_rate(action: str, request: HttpRequest) -> None:
    """Count one ``action`` from the request's client address (``gateway.auth.client_ip``);
    RateLimited (429, with ``retry_after``) when that address is over the action's rate."""
    rate = parse_rate(getattr(settings, ADDRESS_RATES[action]))
    address = client_ip(request)
    if rate is None or address is None:
        return
    _raise_over(limiter.hit(f"a:{action}:{address}", *rate), rate)


def _raise_over(wait: float | None, rate: tuple[int, int]) -> None:
    if wait is not None:
        raise errors.RateLimited(
            f"Too many requests: the limit is {rate[0]} per {rate[1]} seconds; retry in "
            f"{int(wait)} s.",
            details={"retry_after": int(wait), "limit": rate[0], "period_seconds": rate[1]},
        )


def check_rate(token: ApiToken | None, user: Any) -> None:
    """Raise RateLimited (429, with ``retry_after``) when the caller is over a rate: its token's,
    its user's or its workspace's. Every bucket counts the request, refused or not."""
    refusal: tuple[float, tuple[int, int]] | None = None
    for key, setting in _buckets(token, user):
        rate = parse_rate(getattr(settings, setting))
        if rate is None:
            continue
        wait = limiter.hit(key, *rate)
        if wait is not None and (refusal is None or wait > refusal[0]):
            refusal = (wait, rate)
    if refusal is not None:
        _raise_over(*refusal)
