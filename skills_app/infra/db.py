"""Hand-written queries for the recall hot path, prepared on the server.

Django's psycopg 3 backend binds parameters on the client with statement preparation off, so
PostgreSQL plans Level 1's multi-join resolution on every request, several times its execution
time. Here the same SQL runs on a server-binding cursor that prepares it once per connection,
still wrapped by Django (query counting, logging, error translation). Private API: Django's
``ServerBindingCursor`` and ``_prepare_cursor``, psycopg's ``prepare``
(``tests/infra/test_private_apis.py``); ``XMEMO_PREPARED_STATEMENTS=0`` falls back to Django's
own cursor, e.g. behind a transaction-pooling PgBouncer. Figures: docs/operations.md."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from django.conf import settings
from django.db import connection, connections
from psycopg.conninfo import make_conninfo


def _prepared_allowed() -> bool:
    return connection.vendor == "postgresql" and bool(
        getattr(settings, "XMEMO_PREPARED_STATEMENTS", True)
    )


_PREPARED_CURSOR: type | None = None
_NEVER_AUTOMATICALLY = 2**31 - 1


def _prepared_cursor_class() -> type:
    """Django's server-binding cursor, preparing every statement it runs.

    Django turns psycopg's automatic preparation off (``prepare_threshold=None``) for the sake
    of connection poolers, so preparation is asked for explicitly, per statement, here only.
    """
    global _PREPARED_CURSOR
    if _PREPARED_CURSOR is None:
        from django.db.backends.postgresql import base as postgresql_base

        base_class = postgresql_base.ServerBindingCursor  # type: ignore[attr-defined]

        class PreparedCursor(base_class):  # type: ignore[misc, valid-type]
            def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
                kwargs.setdefault("prepare", True)
                return super().execute(query, params, **kwargs)

        _PREPARED_CURSOR = PreparedCursor
    return _PREPARED_CURSOR


def fetch_all(sql: str, params: Sequence[Any], *, prepare: bool = True) -> list[tuple[Any, ...]]:
    """Rows of ``sql``; ``prepare=False`` for queries whose best plan depends on the values
    (full-text search: a generic plan cannot know how common a word is)."""
    if not prepare or not _prepared_allowed():
        with connection.cursor() as plain:
            plain.execute(sql, params)
            rows: list[tuple[Any, ...]] = plain.fetchall()
            return rows
    connection.ensure_connection()
    pg_connection = connection.connection
    held = getattr(connection, "_xmemo_prepared_cursor", None)
    if held is None or held[0] is not pg_connection:
        if pg_connection.prepare_threshold is None:
            # None disables even an explicit prepare=True. Django's own cursors bind on the
            # client and never prepare whatever this says, so only this cursor is affected.
            pg_connection.prepare_threshold = _NEVER_AUTOMATICALLY
        # One cursor per connection, reused: creating a psycopg cursor costs more than the
        # prepared query it runs.
        held = (pg_connection, _prepared_cursor_class()(pg_connection))
        connection._xmemo_prepared_cursor = held  # type: ignore[attr-defined]
    with connection.wrap_database_errors:
        # Django's own path to a wrapped cursor (debug wrapper when queries are logged).
        cursor = connection._prepare_cursor(held[1])  # type: ignore[attr-defined]
    cursor.execute(sql, params)
    result: list[tuple[Any, ...]] = cursor.fetchall()
    return result


def names_joined_sql(column: str) -> str:
    """An aggregate of ``column`` joined by commas, in this database's spelling (an empty set
    gives NULL); callers split and sort."""
    if connection.vendor == "postgresql":
        return f"string_agg({column}, ',')"
    return f"group_concat({column}, ',')"


def connections_in_use() -> int | None:
    """Connections open to this database right now, every process's (PostgreSQL's view of them);
    None where the database cannot tell (SQLite)."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()")
        row = cursor.fetchone()
    return int(row[0]) if row else 0


# libpq parameters a deployment may set in the database URL (the rest of OPTIONS is Django's).
_LIBPQ_OPTIONS = ("sslmode", "sslrootcert", "sslcert", "sslkey", "options", "application_name")


def conninfo() -> str:
    """The libpq connection string of the default PostgreSQL database (the test database in
    tests), for a connection that is not Django's."""
    db = connections["default"].settings_dict
    options = {k: v for k, v in db.get("OPTIONS", {}).items() if k in _LIBPQ_OPTIONS}
    params = {"dbname": db["NAME"], "user": db["USER"], "password": db["PASSWORD"]}
    params |= {"host": db["HOST"], "port": db["PORT"], **options}
    return make_conninfo(**{k: v for k, v in params.items() if v})


@contextmanager
def side_connection() -> Iterator[psycopg.Connection[Any]]:
    """A PostgreSQL connection of its own, in autocommit, in the calling thread: what it
    writes is committed at once, whatever transaction Django's connection holds."""
    with psycopg.connect(conninfo(), autocommit=True) as side:
        yield side
