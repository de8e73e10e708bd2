"""Readiness (docs/contract.md §19): do the database and Redis answer within a second?

Each check runs in a thread of its own with its own connection, so a database that hangs
(stopped, or a network that drops packets) costs the probe its deadline, never a worker
forever, and a check never disturbs the connection of the request thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cache

import redis
from django.conf import settings
from django.db import connections

DEADLINE_SECONDS = 1.0


def _database() -> None:
    connection = connections["default"]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    finally:
        connection.close()


@cache
def _redis_client() -> redis.Redis:
    return redis.Redis.from_url(
        settings.REDIS_URL, socket_connect_timeout=DEADLINE_SECONDS, socket_timeout=DEADLINE_SECONDS
    )


def _redis() -> None:
    _redis_client().ping()


def readiness(deadline: float = DEADLINE_SECONDS) -> dict[str, bool]:
    """Each dependency's name and whether it answered within ``deadline`` seconds."""
    checks: dict[str, Callable[[], None]] = {"database": _database}
    if settings.REDIS_URL:
        checks["redis"] = _redis
    passed: dict[str, bool] = dict.fromkeys(checks, False)

    def run(name: str, check: Callable[[], None]) -> None:
        try:
            check()
        except Exception:  # any failure of a dependency means "not ready"
            return
        passed[name] = True

    threads = [
        threading.Thread(target=run, args=(name, check), name=f"readyz-{name}", daemon=True)
        for name, check in checks.items()
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(deadline)  # together within about one deadline: they run side by side
    return dict(passed)
