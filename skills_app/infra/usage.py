"""Usage counting off the recall hot path (docs/contract.md §19).

A Level 1 or Level 2 answer adds one to a counter in this process's memory. With Redis, what
a process holds goes there (``HINCRBY``, its reply read at the next write) at most
``HANDOFF_SECONDS`` after its first count: with the count that falls due, or from the server's
idle loop (``handoff_if_due``: gunicorn's worker, the MCP service's lifespan), so a busy worker
pays one write a second instead of one per answer. The periodic flush (``services/usage.py``)
moves them into PostgreSQL; without Redis (the embedded default) it stores this process's
memory. While Redis is unreachable counts wait in memory (at most ``_MAX_KEYS`` keys).
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
from typing import Any, NamedTuple

import redis
from django.conf import settings
from django.db import connection
from redis.backoff import NoBackoff
from redis.retry import Retry

from skills_app.models import SkillRevision, UsageDay

logger = logging.getLogger(__name__)
_MAX_KEYS = 100_000
RETRY_SECONDS = 1.0
# Counts wait in memory at most this long before they go to Redis (SPEC §19: visible within 60 s).
HANDOFF_SECONDS = 1.0
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
_due = 0.0  # monotonic seconds: the counts held go to Redis from then on


def count(*, revision_pk: int, client: str, level: int) -> None:
    """One Level 1 (``level=1``) or Level 2 answer of this revision to this client, now."""
    global _day, _due
    now = time.time()
    day, ends = _day
    if now >= ends:  # a new day (UTC) since the last count
        day = datetime.fromtimestamp(now, UTC).date().isoformat()
        _day = (day, (now // 86400 + 1) * 86400)
    key = (day, revision_pk, client[:_CLIENT_MAX])
    with _lock:
        if not _counts:  # the first count held: it goes to Redis within HANDOFF_SECONDS
            _due = time.monotonic() + HANDOFF_SECONDS
        entry = _counts.get(key)
        if entry is None:
            if len(_counts) >= _MAX_KEYS:
                return  # bounded while nothing can be handed on
            entry = _counts[key] = [0, 0, now]
        entry[level - 1] += 1
        entry[2] = now
    if _exit_flush_pid != os.getpid():
        _flush_at_exit_register()
    handoff_if_due()


def handoff_if_due() -> None:
    """Hand the counts held to Redis when the oldest has waited ``HANDOFF_SECONDS`` (and Redis
    is not known to be down); a server's idle loop calls it so a quiet process holds none."""
    if _counts and settings.REDIS_URL and time.monotonic() >= max(_due, _redis_down_until):
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
    """Hand this process's counts on now (written to Redis, else stored in the database);
    answers how many keys. What cannot be handed on is kept for the next flush."""
    counts = _drain()
    if not counts:
        return 0
    try:
        if settings.REDIS_URL:
            _writer.write(counts)
        else:
            store(counts)
    except Exception as exc:  # Redis or the database is down: keep them for the next round
        _kept(counts, exc)
        return 0
    return len(counts)


def settle() -> None:
    """Wait until Redis has answered every count this process wrote (exit, tests); those it
    did not take wait in memory for the next flush."""
    try:
        _writer.settle()
    except Exception as exc:
        _kept([], exc)


def _kept(counts: list[Count], exc: Exception) -> None:
    global _redis_down_until
    _restore(counts)
    _redis_down_until = time.monotonic() + RETRY_SECONDS
    logger.warning("usage counts kept for the next flush: %s", exc)


def reset() -> None:
    """Forget this process's counts (tests)."""
    global _redis_down_until, _due
    _writer.forget()
    _drain()
    _redis_down_until = _due = 0.0


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
        settle()
        flush()  # those the connection failed on, on a new one
        settle()
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


def _commands(counts: Iterable[Count]) -> list[tuple[str, ...]]:
    """The Redis commands adding ``counts`` to what Redis holds for the flush."""
    counts_key, last_key = _keys()
    commands: list[tuple[str, ...]] = []
    for c in counts:
        ident = [c.day, c.revision_pk, c.client]
        for level, n in ((1, c.level1), (2, c.level2)):
            if n:
                commands.append(("HINCRBY", counts_key, json.dumps([*ident, level]), str(n)))
        commands.append(("HSET", last_key, json.dumps(ident), repr(c.last)))
    return commands


def push(counts: Iterable[Count]) -> None:
    """Add ``counts`` to what Redis holds for the workers to flush, and wait for it."""
    pipe = _redis().pipeline(transaction=False)
    for command in _commands(counts):
        pipe.execute_command(*command)
    pipe.execute()


class _Writer:
    """Counts written to Redis without waiting for its replies: they are read at the next
    write (long arrived by then; half the CPU of a round trip), and the counts of a write
    whose reply does not come go back to memory. One connection per process, its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._link: Any = None
        self._owner = (0, "")  # the process and the Redis URL the connection is for
        # Per write not yet answered: how many replies it awaits, and its counts.
        self._unanswered: list[tuple[int, list[Count]]] = []

    def write(self, counts: list[Count]) -> None:
        commands = _commands(counts)
        with self._lock:
            link = self._connected()
            self._read_replies(link)
            try:
                link.send_packed_command(link.pack_commands(commands))
            except Exception:
                self._broken()
                raise
            self._unanswered.append((len(commands), counts))

    def settle(self) -> None:
        with self._lock:
            if self._link is not None:
                self._read_replies(self._link)

    def forget(self) -> None:
        with self._lock:
            self._unanswered = []

    def _connected(self) -> Any:
        owner = (os.getpid(), settings.REDIS_URL)
        if self._link is None or self._owner != owner:
            # A forked child's copy is the parent's: the child opens its own.
            self._link, self._owner = _redis().connection_pool.make_connection(), owner
            self._unanswered = []
        return self._link

    def _read_replies(self, link: Any) -> None:
        while self._unanswered:
            try:
                for _ in range(self._unanswered[0][0]):
                    link.read_response()
            except Exception:
                self._broken()
                raise
            self._unanswered.pop(0)

    def _broken(self) -> None:
        """The connection failed: its unanswered counts go back to memory, it is dropped."""
        for _, counts in self._unanswered:
            _restore(counts)
        self._unanswered = []
        if self._link is not None:
            self._link.disconnect()
        self._link = None


_writer = _Writer()


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
