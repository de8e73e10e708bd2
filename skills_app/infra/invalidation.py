"""When may a cached answer about mutable data still be used? A generation number says.

Recall's slug resolutions and ``gateway.auth``'s verified tokens remember the generation they
were computed in. It moves on at once for an ORM change in this process (signals), at commit
for a change in any process (statement triggers ``NOTIFY xmemo_recall``, drained without
blocking at each lookup), and on a new connection (what happened unheard is unknown). Off
PostgreSQL, or while the LISTEN is not in force, ``current()`` is None and the caches are not
used; ``XMEMO_RECALL_CACHE=0`` turns them off everywhere, which is also what a psycopg upgrade
breaking the private surface used here gets (``tests/infra/test_private_apis.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import select
import threading
import time
import weakref
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models.signals import post_delete, post_save

from skills_app.infra import requestctx
from skills_app.models import (
    ApiToken,
    Membership,
    RevisionScan,
    Skill,
    SkillLabel,
    SkillRevision,
    Workspace,
)

CHANNEL = "xmemo_recall"
_MEMO_KEY = "invalidation.polled"  # (connection, generation) polled in this request
_CONNECTION_OK = 0  # psycopg.pq.ConnStatus.OK
LOOP_LISTENER_NAME = "xmemo-loop-listener"
logger = logging.getLogger("skills_app.cache")


def enabled(db: Any) -> bool:
    """True where caches may trust the generation: on PostgreSQL, unless turned off."""
    return db.vendor == "postgresql" and bool(getattr(settings, "XMEMO_RECALL_CACHE", True))


class Listener:
    """LISTEN on the process's own Django connections, drained without blocking.

    Django's connection, not one of its own, so nothing outlives Django's connection handling (a
    new connection LISTENs again; test databases can be dropped). Inside a transaction a session
    receives nothing, so ``current()`` answers None there. State is kept per database session,
    not per thread: under an ASGI pool, sessions pass between threads and keep listening."""

    def __init__(self) -> None:
        self.generation = 0  # one per process: a change seen by any thread concerns all
        # session → its poller, once attached; sessions whose LISTEN is in force.
        self._pollers: weakref.WeakKeyDictionary[Any, select.poll] = weakref.WeakKeyDictionary()
        self._listening: weakref.WeakSet[Any] = weakref.WeakSet()
        self._lock = threading.RLock()

    def bump(self, *args: Any) -> None:
        with self._lock:
            self.generation += 1

    def current(self) -> int | None:
        """The generation now, or None when changes elsewhere could go unnoticed.

        Polled once per request (token check and resolution reuse it): a change committed
        elsewhere after that poll is counted by the next request's. A change in this process
        moves ``generation`` and so forces a new poll; so does another connection."""
        # The thread's connection wrapper is looked up once (each ``connection.…`` goes through
        # a thread-local proxy).
        db = connections[DEFAULT_DB_ALIAS]
        if not enabled(db):
            return None
        memo = requestctx.memo()
        if memo is not None and not db.in_atomic_block:
            polled = memo.get(_MEMO_KEY)
            if polled is not None and polled == (db.connection, self.generation):
                return self.generation
        generation = self._poll(db)
        if memo is not None and generation is not None:
            memo[_MEMO_KEY] = (db.connection, generation)
        return generation

    def _poll(self, db: Any) -> int | None:
        pg: Any = None
        try:
            # Outside the lock: under a pool this may wait for a free connection, and threads
            # holding connections must be able to take the lock meanwhile.
            db.ensure_connection()
        except Exception:
            logger.warning("Recall cache invalidation unavailable; not caching for now")
            return None
        with self._lock:
            try:
                pg = db.connection
                poller = self._pollers.get(pg)
                if poller is None:
                    poller = self._attach(pg)
                if db.in_atomic_block:
                    # A session in a transaction gets no notifications until it ends.
                    return None
                if pg not in self._listening:
                    pg.execute(f"LISTEN {CHANNEL}")
                    self._listening.add(pg)
                    # Whatever happened while nobody listened is unknown: a new generation.
                    self.generation += 1
                pgconn = pg.pgconn
                self.generation += _waiting(poller, pgconn)
                if pgconn.status != _CONNECTION_OK:
                    raise OSError("connection lost")
                # psycopg keeps notifications it met during queries for a notifies() reader;
                # the handler below has counted them, so do not let them pile up.
                backlog = getattr(pg, "_notifies_backlog", None)
                if backlog:
                    backlog.clear()
            except Exception:  # any failure means: do not trust the caches
                logger.warning("Recall cache invalidation unavailable; not caching for now")
                if pg is not None:
                    self._detach(pg)
                self.generation += 1
                return None
            return self.generation

    def _attach(self, pg: Any) -> select.poll:
        self.generation += 1
        # Notifications psycopg reads while running this connection's queries.
        pg.add_notify_handler(self.bump)
        poller = select.poll()
        poller.register(pg.pgconn.socket, select.POLLIN)
        self._pollers[pg] = poller
        return poller

    def _detach(self, pg: Any) -> None:
        if self._pollers.pop(pg, None) is not None:
            pg.remove_notify_handler(self.bump)
        self._listening.discard(pg)


def _waiting(poller: select.poll, pgconn: Any) -> int:
    """How many notifications wait on a listening connection's socket (a non-blocking poll)."""
    count = 0
    if poller.poll(0):
        pgconn.consume_input()
        while pgconn.notifies() is not None:
            count += 1
    return count


listener = Listener()


def current() -> int | None:
    return listener.current()


def seen() -> int:
    """The generation as last polled, with no poll: cheap enough for an event loop, and moved
    by every change this process makes through the ORM."""
    return listener.generation


class LoopListener:
    """LISTEN on a connection of its own for an event loop, which must never wait on the
    database: ``current()`` drains it without blocking, and a reader on the loop drains it while
    no request comes (PostgreSQL holds back every NOTIFY for a listener that reads nothing).

    The connection is opened by ``ensure`` in the database thread (connecting blocks) and then
    belongs to the loop. Lost, it answers None until ``ensure`` opens another; ``close`` ends it
    with the server that made it (a test database can then be dropped)."""

    RETRY_SECONDS = 5.0

    def __init__(self) -> None:
        self.generation = 0
        self._pg: Any = None  # the loop's; None until adopted, and once lost
        self._poller: select.poll | None = None
        self._fd = -1
        self._opened: Any = None  # opened by ``ensure``, not yet adopted by the loop
        self._retry_at = 0.0
        self._closed = False
        self._lock = threading.Lock()

    def ensure(self) -> None:
        """Open the connection if there is none (database thread; blocks while connecting)."""
        if self._pg is not None or self._opened is not None or self._closed:
            return
        db = connections[DEFAULT_DB_ALIAS]
        if not enabled(db) or time.monotonic() < self._retry_at:
            return
        with self._lock:
            if self._opened is not None:
                return
            params = {
                key: value for key, value in db.get_connection_params().items() if key != "context"
            }
            params["application_name"] = LOOP_LISTENER_NAME  # as pg_stat_activity shows it
            params.setdefault("connect_timeout", 5)
            import psycopg  # PostgreSQL only: the embedded default never loads it

            try:
                pg = psycopg.Connection.connect(**params, autocommit=True)
                pg.execute(f"LISTEN {CHANNEL}")
            except psycopg.Error as exc:
                logger.warning("Recall cache invalidation for the event loop unavailable: %s", exc)
                self._retry_at = time.monotonic() + self.RETRY_SECONDS
                return
            if self._closed:  # the server stopped while this connected
                pg.close()
                return
            self._opened = pg

    def current(self) -> int | None:
        """The generation now, or None while nothing listens (event loop; never blocks)."""
        if not getattr(settings, "XMEMO_RECALL_CACHE", True):
            return None
        if self._pg is None and not self._adopt():
            return None
        self._drain()
        return None if self._pg is None else self.generation

    def close(self) -> None:
        self._drop()
        with self._lock:
            self._closed = True
            opened, self._opened = self._opened, None
        if opened is not None:
            opened.close()

    def _adopt(self) -> bool:
        with self._lock:
            pg, self._opened = self._opened, None
        if pg is None:
            return False
        self._fd = pg.pgconn.socket
        self._poller = select.poll()
        self._poller.register(self._fd, select.POLLIN)
        asyncio.get_running_loop().add_reader(self._fd, self._drain)
        self._pg = pg
        self.generation += 1  # what happened before it listened is unknown
        return True

    def _drain(self) -> None:
        pg, poller = self._pg, self._poller
        if pg is None or poller is None:
            return
        try:
            self.generation += _waiting(poller, pg.pgconn)
            if pg.pgconn.status != _CONNECTION_OK:
                raise OSError("connection lost")
        except Exception:  # any failure means: do not trust the caches
            logger.warning("Recall cache invalidation for the event loop lost; reconnecting")
            self._drop()

    def _drop(self) -> None:
        pg, self._pg, self._poller = self._pg, None, None
        if pg is None:
            return
        self.generation += 1
        with contextlib.suppress(RuntimeError):  # closed with no loop running: none to tell
            asyncio.get_running_loop().remove_reader(self._fd)
        pg.close()


def _changed(sender: Any, **kwargs: Any) -> None:
    listener.bump()


for _model in (Skill, SkillRevision, SkillLabel, Membership, Workspace, ApiToken, RevisionScan):
    post_save.connect(_changed, sender=_model, dispatch_uid=f"xmemo-gen-save-{_model.__name__}")
    post_delete.connect(_changed, sender=_model, dispatch_uid=f"xmemo-gen-del-{_model.__name__}")
