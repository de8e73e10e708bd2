"""Usage counting off the recall hot path (docs/contract.md §19).

A Level 1 or Level 2 answer adds one to a counter: in Redis where it is configured (``HINCRBY``
in one pipelined round trip, so a crashed server loses nothing), from where the periodic flush
(``services/usage.py``) moves the counts into PostgreSQL; without Redis (the embedded default)
in this process's memory, which the same flush, run by ``make run`` in this process, stores.
While Redis is unreachable counts wait in memory (at most ``_MAX_KEYS`` keys) and go with the
next count after ``RETRY_SECONDS``, or at exit. Redis answers are checked JSON, never unpickled.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import threading
import time
from collections.abc import Iterable
from datetime import UTC, date, datetime
from functools import cache
from typing import NamedTuple

import redis
from django.conf import settings
from django.db import connection
from redis.backoff import NoBackoff
from redis.retry import Retry

from skills_app.models import SkillRevision, UsageDay

logger = logging.getLogger(__name__)
_MAX_KEYS = 100_000
RETRY_SECONDS = 1.0
_CLIENT_MAX = 100


class Count(NamedTuple):
    day: str  # ISO date, UTC
    revision_pk: int
    client: str
    level1: int
    level2: int
    last: float  # epoch seconds of the latest answer counted


_Key = tuple[str, int, str]
_counts: dict[_Key, list[float]] = {}
_lock = threading.Lock()
_day = ("", 0.0)  # (ISO date, the epoch second it ends at)
_exit_flush_pid: int | None = None
_redis_down_until = 0.0  # monotonic seconds: counts wait in memory until then


def count(*, revision_pk: int, client: str, level: int) -> None:
    """One Level 1 (``level=1``) or Level 2 answer of this revision to this client, now."""
    global _day
    now = time.time()
    day, ends = _day
    if now >= ends:  # a new day (UTC) since the last count
        day = datetime.fromtimestamp(now, UTC).date().isoformat()
        _day = (day, (now // 86400 + 1) * 86400)
    key = (day, revision_pk, client[:_CLIENT_MAX])
    with _lock:
        entry = _counts.get(key)
        if entry is None:
            if len(_counts) >= _MAX_KEYS:
                return  # bounded while nothing can be handed on
            entry = _counts[key] = [0, 0, now]
        entry[level - 1] += 1
        entry[2] = now
    if _exit_flush_pid != os.getpid():
        _flush_at_exit_register()
    if settings.REDIS_URL and time.monotonic() >= _redis_down_until:
        flush()


def _drain() -> list[Count]:
    global _counts
    with _lock:
        taken, _counts = _counts, {}
    return [Count(k[0], k[1], k[2], int(v[0]), int(v[1]), v[2]) for k, v in taken.items()]


def _restore(counts: Iterable[Count]) -> None:
    with _lock:
        for c in counts:
            key = (c.day, c.revision_pk, c.client)
            entry = _counts.get(key)
            if entry is None:
                if len(_counts) >= _MAX_KEYS:
                    continue
                entry = _counts[key] = [0, 0, c.last]
            entry[0] += c.level1
            entry[1] += c.level2
            entry[2] = max(entry[2], c.last)


def flush() -> int:
    """Hand this process's counts on now (Redis, else the database); answers how many keys.
    What cannot be handed on is kept for the next flush."""
    global _redis_down_until
    counts = _drain()
    if not counts:
        return 0
    try:
        if settings.REDIS_URL:
            push(counts)
        else:
            store(counts)
    except Exception as exc:  # Redis or the database is down: keep them for the next round
        _restore(counts)
        _redis_down_until = time.monotonic() + RETRY_SECONDS
        logger.warning("usage counts kept for the next flush: %s", exc)
        return 0
    return len(counts)


def reset() -> None:
    """Forget this process's counts (tests)."""
    global _redis_down_until
    _drain()
    _redis_down_until = 0.0


def _flush_at_exit_register() -> None:
    global _exit_flush_pid
    with _lock:
        if _exit_flush_pid == os.getpid():
            return
        _exit_flush_pid = os.getpid()
    atexit.register(_flush_at_exit)


def _flush_at_exit() -> None:
    try:
        flush()
    except Exception:  # the process is going away whatever happens
        logger.exception("usage counts lost at exit")


# ------------------------------------------------------------------------------------- Redis


@cache
def _redis() -> redis.Redis:
    # No retries (redis-py's default backs off for seconds): a count is on a request's path,
    # and what Redis cannot take waits in memory for RETRY_SECONDS instead.
    return redis.Redis.from_url(
        settings.REDIS_URL,
        socket_connect_timeout=0.5,
        socket_timeout=2.0,
        retry=Retry(NoBackoff(), 0),
    )


def _keys() -> tuple[str, str]:
    base = f"{settings.XMEMO_CACHE_PREFIX}:usage"
    return f"{base}:counts", f"{base}:last"


def push(counts: Iterable[Count]) -> None:
    """Add ``counts`` to what Redis holds for the workers to flush."""
    counts_key, last_key = _keys()
    pipe = _redis().pipeline(transaction=False)
    for c in counts:
        ident = [c.day, c.revision_pk, c.client]
        for level, n in ((1, c.level1), (2, c.level2)):
            if n:
                pipe.hincrby(counts_key, json.dumps([*ident, level]), n)
        pipe.hset(last_key, json.dumps(ident), repr(c.last))
    pipe.execute()


def pop() -> list[Count]:
    """Take everything Redis holds (one worker gets each count: the hashes are renamed away
    atomically before they are read)."""
    counts_key, last_key = _keys()
    suffix = f":flushing:{os.getpid()}:{time.monotonic_ns()}"
    client = _redis()
    pipe = client.pipeline(transaction=True)
    pipe.rename(counts_key, counts_key + suffix)
    pipe.rename(last_key, last_key + suffix)
    pipe.execute(raise_on_error=False)  # "no such key": nothing counted since the last flush
    pipe = client.pipeline(transaction=False)
    pipe.hgetall(counts_key + suffix)
    pipe.hgetall(last_key + suffix)
    pipe.delete(counts_key + suffix, last_key + suffix)
    raw_counts, raw_last, _ = pipe.execute()
    return _decode(raw_counts, raw_last)


def _decode(raw_counts: dict[bytes, bytes], raw_last: dict[bytes, bytes]) -> list[Count]:
    last: dict[_Key, float] = {}
    for field, value in raw_last.items():
        ident = _ident(field, 3)
        if ident is not None:
            try:
                last[ident[0]] = float(value)
            except ValueError:
                continue
    merged: dict[_Key, list[int]] = {}
    for field, value in raw_counts.items():
        ident = _ident(field, 4)
        if ident is None or ident[1] not in (1, 2):
            continue
        try:
            n = int(value)
        except ValueError:
            continue
        if n > 0:
            merged.setdefault(ident[0], [0, 0])[ident[1] - 1] += n
    now = time.time()
    return [Count(*key, l1, l2, last.get(key, now)) for key, (l1, l2) in merged.items()]


def _ident(field: bytes, size: int) -> tuple[_Key, int] | None:
    try:
        parts = json.loads(field)
        if not isinstance(parts, list) or len(parts) != size:
            return None
        day, revision_pk, client = parts[0], parts[1], parts[2]
        date.fromisoformat(day)
    except (ValueError, TypeError):
        return None
    if not isinstance(revision_pk, int) or not isinstance(client, str):
        return None
    level = parts[3] if size == 4 else 0
    if not isinstance(level, int):
        return None
    return (day, revision_pk, client[:_CLIENT_MAX]), level


# ---------------------------------------------------------------------------------- database

_UPSERT = """
INSERT INTO {table} (revision_id, date, client_name, level1, level2, last_recalled_at)
VALUES (%s, %s, %s, %s, %s, %s)
ON CONFLICT (revision_id, date, client_name) DO UPDATE SET
  level1 = {table}.level1 + excluded.level1,
  level2 = {table}.level2 + excluded.level2,
  last_recalled_at = CASE WHEN excluded.last_recalled_at > {table}.last_recalled_at
    THEN excluded.last_recalled_at ELSE {table}.last_recalled_at END
"""


def store(counts: Iterable[Count]) -> int:
    """Add ``counts`` to the daily rows (an upsert: concurrent flushes add, never overwrite).
    Counts of revisions deleted since are dropped. Answers how many rows were written."""
    counts = list(counts)
    existing = set(
        SkillRevision.objects.filter(pk__in={c.revision_pk for c in counts}).values_list(
            "pk", flat=True
        )
    )
    ops = connection.ops
    rows = [
        (
            c.revision_pk,
            ops.adapt_datefield_value(date.fromisoformat(c.day)),
            c.client,
            c.level1,
            c.level2,
            ops.adapt_datetimefield_value(datetime.fromtimestamp(c.last, UTC)),
        )
        for c in counts
        if c.revision_pk in existing
    ]
    if rows:
        sql = _UPSERT.format(table=connection.ops.quote_name(UsageDay._meta.db_table))
        with connection.cursor() as cursor:
            cursor.executemany(sql, rows)
    return len(rows)
