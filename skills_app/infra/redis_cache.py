"""The Django cache on Redis: data only, and degraded rather than down.

Django's ``RedisCache`` pickles values, so anyone who can write to Redis could make the next
read run code. ``DataRedisCache`` stores integers as integers (``incr`` stays atomic), bytes as
bytes and the rest as tagged JSON; a value it did not write reads as a miss (readers whose
answers must not be forged as data also sign them: ``skills_app.infra.cache``).
``TolerantRedisCache``, the configured backend, turns a Redis outage into misses and skipped
writes (docs/contract.md §7); ``incr``/``decr`` still raise, so a counter knows its count is
missing."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable
from typing import Any

import redis
from django.conf import settings
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import ResponseError

logger = logging.getLogger("skills_app.infra.redis_cache")

_BYTES = b"b:"
_JSON = b"j:"


class ForeignValue(Exception):
    """A stored value this serializer did not write."""


class DataSerializer:
    """``dumps``/``loads`` for ``RedisCacheClient``: data in, data out, never code."""

    def dumps(self, obj: Any) -> Any:  # int or bytes
        if type(obj) is int:  # not bool: True must come back as True
            return obj
        if isinstance(obj, bytes):
            return _BYTES + obj
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return _JSON + text.encode("utf-8")

    def loads(self, data: bytes) -> Any:
        if data.startswith(_BYTES):
            return data[len(_BYTES) :]
        if data.startswith(_JSON):
            try:
                return json.loads(data[len(_JSON) :])
            except ValueError as exc:
                raise ForeignValue from exc
        try:
            return int(data)
        except ValueError as exc:
            raise ForeignValue from exc


_Key = str | bytes | memoryview

# One set of connection pools per process for each server list and pool options. Django makes a
# cache object per thread and, under ASGI, per request (its cache handler is context-local and
# every ASGI request has a context of its own); with a pool per object, an ASGI worker opened a
# new connection to Redis for every request it served. redis-py's pools are thread-safe and
# start afresh in a forked child. This replaces ``RedisCacheClient._pools``, the dict Django
# keeps its pools in (not a public API: tests/infra/test_private_apis_servers.py checks it);
# ``XMEMO_REDIS_SHARED_POOLS=0`` (settings) leaves Django's own pool per cache object instead.
_POOLS: dict[tuple[tuple[str, ...], str], dict[int, Any]] = {}


class DataRedisCacheClient(RedisCacheClient):
    def __init__(self, servers: list[str], **options: Any) -> None:
        # No OPTIONS can bring a pickling serializer back.
        self._data = DataSerializer()
        super().__init__(servers, **{**options, "serializer": self._data})
        if getattr(settings, "XMEMO_REDIS_SHARED_POOLS", True):
            pool_options = repr(sorted((k, v) for k, v in options.items() if k != "serializer"))
            self._pools = _POOLS.setdefault((tuple(servers), pool_options), {})

    def _load(self, key: _Key, raw: Any) -> Any:
        try:
            return self._data.loads(raw)
        except ForeignValue:
            logger.warning("Cache key %r holds a value this application did not write", key)
            raise

    def get(self, key: _Key, default: Any) -> Any:
        raw = self.get_client(key).get(key)
        if raw is None:
            return default
        try:
            return self._load(key, raw)
        except ForeignValue:
            return default

    def get_many(self, keys: Iterable[_Key]) -> dict[_Key, Any]:
        keys = list(keys)
        found: dict[_Key, Any] = {}
        for key, raw in zip(keys, self.get_client(None).mget(keys), strict=True):
            if raw is None:
                continue
            try:
                found[key] = self._load(key, raw)
            except ForeignValue:
                continue
        return found

    def incr(self, key: _Key, delta: int) -> Any:
        try:
            return super().incr(key, delta)
        except ResponseError:
            # Not an integer, so not a count this application keeps: Django's "no such key".
            logger.warning("Cache key %r holds a value that is not a count; reset", key)
            self.get_client(key, write=True).delete(key)
            raise ValueError(f"Key '{key!r}' not found.") from None


class DataRedisCache(RedisCache):
    """``django.core.cache.backends.redis.RedisCache`` with ``DataRedisCacheClient``."""

    _cache: DataRedisCacheClient  # Django's cached property, built from ``_class``

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = DataRedisCacheClient

    def clear(self) -> None:
        """Delete this cache's keys (under its KEY_PREFIX) only: Django's ``clear`` empties the
        whole Redis database, and with it the Celery broker's queues and whatever else shares
        it (another deployment's prefix, a parallel test run's)."""
        client = self._cache.get_client(None, write=True)
        batch: list[bytes] = []
        for key in client.scan_iter(match=f"{self.key_prefix}:*", count=1000):
            batch.append(key)
            if len(batch) == 1000:
                client.unlink(*batch)
                batch.clear()
        if batch:
            client.unlink(*batch)


#: After a failure, Redis is not asked again for this long (no connect attempt per request).
RETRY_AFTER_SECONDS = 1.0


# Until when (monotonic) each location is taken to be down, shared by every cache object of
# the process for the reason above: the next request must not wait out the timeout again.
_DOWN_UNTIL: dict[str, float] = {}


class TolerantRedisCache(DataRedisCache):
    """``DataRedisCache`` answering a miss (or skipping a write) while Redis is unreachable."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._location = server

    def _guarded(self, default: Any, call: Any, *args: Any, **kwargs: Any) -> Any:
        if time.monotonic() < _DOWN_UNTIL.get(self._location, 0.0):
            return default
        try:
            return call(*args, **kwargs)
        except redis.RedisError as exc:
            logger.warning("Redis cache unavailable (%s); serving without it", exc)
            _DOWN_UNTIL[self._location] = time.monotonic() + RETRY_AFTER_SECONDS
            return default

    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        return self._guarded(default, super().get, key, default, version)

    def get_many(self, keys: Any, version: int | None = None) -> Any:
        return self._guarded({}, super().get_many, keys, version)

    def has_key(self, key: Any, version: int | None = None) -> Any:
        return self._guarded(False, super().has_key, key, version)

    def set(self, *args: Any, **kwargs: Any) -> None:
        self._guarded(None, super().set, *args, **kwargs)

    def set_many(self, *args: Any, **kwargs: Any) -> Any:
        return self._guarded([], super().set_many, *args, **kwargs)

    def add(self, *args: Any, **kwargs: Any) -> Any:
        return self._guarded(False, super().add, *args, **kwargs)

    def touch(self, *args: Any, **kwargs: Any) -> Any:
        return self._guarded(False, super().touch, *args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        return self._guarded(False, super().delete, *args, **kwargs)

    def delete_many(self, *args: Any, **kwargs: Any) -> None:
        self._guarded(None, super().delete_many, *args, **kwargs)

    def clear(self) -> None:
        self._guarded(None, super().clear)
