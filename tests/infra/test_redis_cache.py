"""The Redis cache keeps one set of connections per process, whatever Django's cache handler does.

Django hands out a cache object per thread and, under ASGI, per request: its cache handler is
context-local, and every ASGI request runs in a context of its own. Each object used to open its
own connection pool, so an ASGI worker (the MCP service) opened a new TCP connection to Redis
for every request it served, and forgot between requests that Redis was down.
"""

from __future__ import annotations

import contextvars
import socket
from collections.abc import Callable
from typing import Any

import pytest
import redis
from django.conf import settings
from django.core.cache import caches

from skills_app.infra.redis_cache import TolerantRedisCache
from tests.support import require_service


@pytest.fixture
def redis_location() -> str:
    location = settings.CACHES["default"].get("LOCATION")
    require_service("Redis", bool(location), "set REDIS_URL so the cache is Redis")
    return str(location)


def _in_a_request_context(read: Callable[[], Any]) -> Any:
    """``read`` as an ASGI request runs it: in a fresh context."""
    return contextvars.Context().run(read)


def test_requests_in_contexts_of_their_own_share_the_redis_connections(
    redis_location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sockets opened in this process (the server's own count also sees the other workers)."""
    connects: list[object] = []
    real_connect = redis.connection.Connection._connect

    def counted_connect(self: redis.connection.Connection) -> socket.socket:
        connects.append(self)
        return real_connect(self)

    objects = [_in_a_request_context(lambda: caches["default"]) for _ in range(3)]
    assert len({id(o) for o in objects}) == 3, "Django gives each context a cache object"
    _in_a_request_context(lambda: caches["default"].get("shared-pool-probe"))  # connected once
    monkeypatch.setattr(redis.connection.Connection, "_connect", counted_connect)
    for _ in range(50):
        _in_a_request_context(lambda: caches["default"].get("shared-pool-probe"))
    assert len(connects) <= 1  # not one per request


def test_an_outage_seen_by_one_request_spares_the_next_ones_the_wait() -> None:
    """A Redis that accepts and never answers: the first read waits out its timeout and marks
    Redis down; reads by other cache objects (other requests) in the next second do not try."""
    silent = socket.create_server(("127.0.0.1", 0))
    silent.setblocking(False)
    location = f"redis://127.0.0.1:{silent.getsockname()[1]}/0"
    params = {"OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2}}
    try:
        assert TolerantRedisCache(location, params).get("k", "miss") == "miss"
        for _ in range(5):
            assert TolerantRedisCache(location, params).get("k", "miss") == "miss"
        attempts = 0
        while True:
            try:
                conn, _ = silent.accept()
            except BlockingIOError:
                break
            conn.close()
            attempts += 1
        assert attempts == 1
    finally:
        silent.close()


def test_clear_deletes_only_this_caches_keys(redis_location: str) -> None:
    """Redis is shared: the Celery broker's queues, another deployment's prefix, another test
    worker's keys. ``clear`` takes its own keys, never the rest of the database."""
    server = redis.Redis.from_url(redis_location)
    cache = caches["default"]
    neighbours = {"celery": b"queued task", f"{cache.key_prefix}-other:1:k": b"theirs"}
    try:
        server.mset(neighbours)
        cache.set_many({f"mine-{i}": i for i in range(2500)})  # more than one batch
        cache.clear()
        assert cache.get("mine-0") is None
        assert not list(server.scan_iter(match=f"{cache.key_prefix}:*"))
        assert server.mget(list(neighbours)) == list(neighbours.values())
    finally:
        server.delete(*neighbours)
        server.close()
