"""The private Django and psycopg surface ``skills_app.infra`` stands on, checked to fail loudly.

``infra/db.py`` (prepared statements on a server-binding cursor) and ``infra/invalidation.py``
(LISTEN/NOTIFY on Django's own connection) use attributes no public API promises. Both degrade
quietly when one goes away — statements are planned again on every request, or caching turns
itself off with a log line — so an upgrade of Django or psycopg that breaks them would pass
every other test. These tests name each attribute and check that it still does what the modules
need.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from django.db import DatabaseError, connection
from django.db.backends.postgresql import base as postgresql_base

from skills_app.infra import db, invalidation
from tests.support import require_service, wait_until

# ``transaction=True``: a session inside a transaction receives no notifications, so
# ``invalidation.current()`` answers None in an ordinary (rolled back) test.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _postgresql() -> None:
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")


def _pg() -> Any:
    connection.ensure_connection()
    return connection.connection


def _notify_elsewhere() -> None:
    """``NOTIFY`` from another session, as another process's trigger would."""
    params = {
        key: value
        for key, value in connection.get_connection_params().items()
        if key not in ("cursor_factory", "context", "prepare_threshold")
    }
    with psycopg.connect(**params, autocommit=True) as other:
        other.execute(f"NOTIFY {invalidation.CHANNEL}")


def _eventually(check: Callable[[], bool], seconds: float = 2.0) -> None:
    wait_until(check, seconds, interval=0.005, message="never happened")


# --- db.py: prepared statements -------------------------------------------------------------------


def test_django_still_has_a_server_binding_cursor_that_can_prepare() -> None:
    cursor_class = postgresql_base.ServerBindingCursor  # type: ignore[attr-defined]
    assert issubclass(cursor_class, psycopg.Cursor)
    assert "prepare" in inspect.signature(cursor_class.execute).parameters


def test_django_still_wraps_a_raw_cursor_and_translates_its_errors() -> None:
    pg = _pg()
    raw = pg.cursor()
    wrapped = connection._prepare_cursor(raw)  # type: ignore[attr-defined]
    assert wrapped.cursor is raw
    with pytest.raises(DatabaseError), connection.wrap_database_errors:
        raw.execute("SELECT * FROM no_such_table_anywhere")


def test_psycopg_connection_still_takes_a_prepare_threshold() -> None:
    pg = _pg()
    assert isinstance(pg, psycopg.Connection)
    before = pg.prepare_threshold
    try:
        pg.prepare_threshold = 7
        assert pg.prepare_threshold == 7
    finally:
        pg.prepare_threshold = before


def test_fetch_all_prepares_its_statement_on_the_server() -> None:
    sql = "SELECT %s::int + 40 AS xmemo_private_api_probe"
    assert db.fetch_all(sql, [2]) == [(42,)]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
            ["%xmemo_private_api_probe%"],
        )
        (prepared,) = cursor.fetchone()
    assert prepared == 1
    assert db.fetch_all(sql, [3]) == [(43,)]  # the held cursor runs it again


def test_fetch_all_without_prepare_leaves_no_prepared_statement() -> None:
    assert db.fetch_all("SELECT 1 AS xmemo_unprepared_probe", [], prepare=False) == [(1,)]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
            ["%xmemo_unprepared_probe%"],
        )
        assert cursor.fetchone() == (0,)


# --- invalidation.py: LISTEN/NOTIFY on Django's connection ------------------------------------


def test_psycopg_still_has_the_notification_surface() -> None:
    pg = _pg()
    assert callable(pg.add_notify_handler)
    assert callable(pg.remove_notify_handler)
    assert len(pg._notifies_backlog) == 0  # a deque psycopg fills for a notifies() reader
    pgconn = pg.pgconn
    assert isinstance(pgconn.socket, int)
    assert callable(pgconn.consume_input)
    assert pgconn.notifies() is None
    assert pgconn.status == psycopg.pq.ConnStatus.OK
    assert psycopg.pq.ConnStatus.OK == invalidation._CONNECTION_OK


def test_a_notify_from_another_session_moves_the_generation_without_warnings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="skills_app.cache")
    first = invalidation.current()
    assert isinstance(first, int)
    assert invalidation.current() == first  # nothing happened: nothing moves
    _notify_elsewhere()
    _eventually(lambda: (invalidation.current() or 0) > first)
    assert not [r for r in caplog.records if "unavailable" in r.getMessage()]


def test_a_notify_met_during_a_query_is_counted_and_not_kept() -> None:
    """psycopg hands a notification it reads mid-query to the handler (some versions also keep
    a copy in its backlog for a ``notifies()`` reader); it is counted once and never piles up."""
    first = invalidation.current()
    assert isinstance(first, int)
    pg = _pg()
    _notify_elsewhere()

    def read_during_a_query() -> bool:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return invalidation.listener.generation > first  # the handler counted it

    _eventually(read_during_a_query)
    assert (invalidation.current() or 0) > first
    assert len(pg._notifies_backlog) == 0
