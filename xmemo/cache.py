"""The Redis cache, degraded rather than down while Redis is unreachable.

Everything this project keeps in the cache can be recomputed from the database, so a Redis
outage turns reads into misses and writes into no-ops instead of failing the request (SPEC §7).
Counting (``incr``/``decr``) still raises: a caller that counts must know the count is missing
(the rate limiter then counts in-process).
"""

from __future__ import annotations

import logging
import time
from typing import Any

import redis
from django.core.cache.backends.redis import RedisCache

logger = logging.getLogger(__name__)

#: After a failure, Redis is not asked again for this long (no connect attempt per request).
RETRY_AFTER_SECONDS = 1.0


class TolerantRedisCache(RedisCache):
    _down_until = 0.0

    def _guarded(self, default: Any, call: Any, *args: Any, **kwargs: Any) -> Any:
        if time.monotonic() < self._down_until:
            return default
        try:
            return call(*args, **kwargs)
        except redis.RedisError as exc:
            logger.warning("Redis cache unavailable (%s); serving without it", exc)
            self._down_until = time.monotonic() + RETRY_AFTER_SECONDS
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
