"""Readiness (docs/contract.md §19): both checks within one deadline, on connections of their own;
a database or a Redis that accepts and never answers is "not ready", never a hung probe."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection

from skills_app.infra import health
from tests.support import require_service


@pytest.fixture
def silent() -> Iterator[int]:
    """A port that takes connections into its backlog and never says a word."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield sock.getsockname()[1]


def test_the_database_and_redis_answer(settings: Any) -> None:
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    require_service("Redis", bool(settings.REDIS_URL), "set REDIS_URL")
    assert health.readiness() == {"database": True, "redis": True}


def test_a_database_that_hangs_is_not_ready_within_the_deadline(
    silent: int, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    settings.REDIS_URL = ""
    monkeypatch.setattr(health.db, "conninfo", lambda: f"host=127.0.0.1 port={silent} dbname=x")
    assert health.readiness(deadline=0.5) == {"database": False}


@pytest.mark.django_db
def test_a_redis_that_hangs_is_not_ready_within_the_deadline(silent: int, settings: Any) -> None:
    settings.REDIS_URL = f"redis://127.0.0.1:{silent}/0"
    checks = health.readiness(deadline=0.5)
    assert checks["redis"] is False
    assert checks["database"] is True
