"""Cursors and the batched rate limiter."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

import pytest
from django.core.cache import cache

from skills_app import errors
from skills_app.gateway.ratelimit import RateLimiter, parse_rate
from skills_app.selectors.pagination import decode_cursor, encode_cursor


def test_cursors_round_trip_and_are_opaque() -> None:
    when = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    cursor = encode_cursor("audit:team", [when, 123456789])
    assert decode_cursor("audit:team", cursor) == [when, 123456789]
    raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    assert b"123456789" not in raw
    assert b"audit" not in raw
    assert encode_cursor("audit:team", [when, 1]) != encode_cursor("audit:team", [when, 1])


@pytest.mark.parametrize("mutate", ["flip", "kind", "garbage", "short"])
def test_tampered_cursors_are_refused(mutate: str) -> None:
    cursor = encode_cursor("skills", ["ws", "slug"])
    if mutate == "flip":
        raw = bytearray(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        raw[10] ^= 1
        cursor = base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
        kind = "skills"
    elif mutate == "kind":
        kind = "tokens"
    elif mutate == "garbage":
        cursor, kind = "not a cursor!", "skills"
    else:
        cursor, kind = "abc", "skills"
    with pytest.raises(errors.ValidationFailed):
        decode_cursor(kind, cursor)


def test_rate_parsing() -> None:
    assert parse_rate("6000/min") == (6000, 60)
    assert parse_rate("10/s") == (10, 1)
    assert parse_rate("5/hour") == (5, 3600)
    assert parse_rate("") is None


def test_small_limits_are_exact_across_processes() -> None:
    cache.clear()
    first, second = RateLimiter(), RateLimiter()  # two worker processes, one shared cache
    assert first.hit("t:a", 3, 60) is None
    assert second.hit("t:a", 3, 60) is None
    assert first.hit("t:a", 3, 60) is None
    wait = second.hit("t:a", 3, 60)
    assert wait is not None
    assert 1 <= wait <= 60
    assert first.hit("t:b", 3, 60) is None  # another token has its own count


def test_large_limits_sync_in_batches_with_bounded_overshoot() -> None:
    cache.clear()
    first, second = RateLimiter(), RateLimiter()
    limit, allowed = 1000, 0
    for _ in range(1500):
        for limiter in (first, second):
            if limiter.hit("t:busy", limit, 60) is None:
                allowed += 1
    # Each process batches up to limit/100 requests between syncs: the overshoot stays small.
    assert limit <= allowed <= limit + 2 * (limit // 100)


def test_without_the_shared_cache_each_process_limits_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import redis

    from skills_app.gateway import ratelimit as throttling

    def unreachable(*args: Any, **kwargs: Any) -> int:
        raise redis.ConnectionError("Connection refused")

    monkeypatch.setattr(throttling.cache, "incr", unreachable)
    monkeypatch.setattr(throttling.cache, "add", lambda *a, **k: False)
    process = RateLimiter()
    assert [process.hit("t:down", 3, 60) for _ in range(3)] == [None, None, None]
    assert process.hit("t:down", 3, 60) is not None  # still limited, by this process's count
