"""Two-level cache for immutable recall data: an in-process LRU, then the Django cache.

Only what can never change goes here (a revision's Level 1 content and its components, under
random never-reused ids), so entries need no invalidation; what can change (which revision is
published, who may read it) is resolved by the database before the cache is read. The shared
tier (Redis, which whoever holds its URL can write) holds bytes only, each signed with an HMAC
of key and bytes under SECRET_KEY: a forged or moved value is a miss. No private API;
``XMEMO_RECALL_LOCAL_CACHE_BYTES=0`` keeps nothing in process."""

from __future__ import annotations

import hmac
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import cache
from django.utils.crypto import salted_hmac

T = TypeVar("T")

# One week: the entries are immutable, the timeout only lets unused ones age out of Redis.
SHARED_TIMEOUT_SECONDS = 7 * 24 * 3600
# Moves when what an entry holds changes shape (v3: a revision's root content gained
# approx_tokens), so no process decodes an entry written in another shape.
KEY_PREFIX = "xmemo:recall:v3:"
# The module's first home: kept so entries already in the shared cache still verify.
_MAC_SALT = "skills_app.selectors.cache"
_MAC_BYTES = 32


class ByteBoundedLRU:
    """A thread-safe LRU bounded by an estimate of the bytes it holds."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._data: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> Any | None:
        with self._lock:
            entry = self._data.get(key)
            if entry is None:
                return None
            self._data.move_to_end(key)
            return entry[0]

    def set(self, key: str, value: Any, size: int) -> None:
        if size > self.max_bytes // 4:
            return  # one huge entry must not flush everything else
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._data[key] = (value, size)
            self._bytes += size
            while self._bytes > self.max_bytes and self._data:
                _, (_, dropped) = self._data.popitem(last=False)
                self._bytes -= dropped

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self._data)


local_cache = ByteBoundedLRU(
    int(getattr(settings, "XMEMO_RECALL_LOCAL_CACHE_BYTES", 32 * 1024 * 1024))
)


def _mac(full_key: str, payload: bytes) -> bytes:
    message = full_key.encode("utf-8") + b"\x00" + payload
    return salted_hmac(_MAC_SALT, message, algorithm="sha256").digest()


def _shared_get(full_key: str) -> bytes | None:
    """The payload stored under ``full_key`` if this application signed it, else None."""
    stored = cache.get(full_key)
    if not isinstance(stored, bytes) or len(stored) < _MAC_BYTES:
        return None
    mac, payload = stored[:_MAC_BYTES], stored[_MAC_BYTES:]
    return payload if hmac.compare_digest(mac, _mac(full_key, payload)) else None


def cached_immutable(
    key: str,
    load: Callable[[], T | None],
    *,
    encode: Callable[[T], bytes],
    decode: Callable[[bytes], T],
) -> T | None:
    """The value under ``key``: in-process first, then the shared cache, then ``load()``.

    ``load`` answers the value or None when there is nothing (None is not cached: the
    resolution query already proved the revision exists). The shared cache holds
    ``encode(value)``; ``decode`` turns those bytes back into the value.
    """
    full_key = KEY_PREFIX + key
    value = local_cache.get(full_key)
    if value is not None:
        return value
    payload = _shared_get(full_key)
    if payload is not None:
        value = decode(payload)
    else:
        value = load()
        if value is None:
            return None
        payload = encode(value)
        cache.set(full_key, _mac(full_key, payload) + payload, SHARED_TIMEOUT_SECONDS)
    # Decoded, a value takes about twice its encoded bytes (text, and the bytes it came from).
    local_cache.set(full_key, value, 2 * len(payload) + 300)
    return value


def clear_local() -> None:
    local_cache.clear()
