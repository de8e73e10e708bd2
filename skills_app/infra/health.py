"""Readiness (docs/contract.md §19): do the database and Redis answer within a second?

The checks run side by side on an event loop of their own, in the calling thread (asyncio, no
thread), each on a connection opened for it, under one deadline: a database that hangs (stopped,
or a network that drops packets) costs the probe its deadline, never a worker forever, and a
check never disturbs the connection of the request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import psycopg
import redis.asyncio as aioredis
from django.conf import settings
from django.db import connections

from skills_app.infra import db

DEADLINE_SECONDS = 1.0


def _local_database() -> bool:
    """The embedded default's SQLite file, on this machine: nothing to hang on."""
    try:
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:  # any failure of a dependency means "not ready"
        return False
    return True


async def _database() -> None:
    async with await psycopg.AsyncConnection.connect(db.conninfo(), autocommit=True) as conn:
        await conn.execute("SELECT 1")


async def _redis() -> None:
    client = aioredis.Redis.from_url(settings.REDIS_URL)
    try:
        await client.ping()
    finally:
        await client.aclose()


async def _checks(
    checks: dict[str, Callable[[], Awaitable[None]]], deadline: float
) -> dict[str, bool]:
    tasks = {name: asyncio.ensure_future(check()) for name, check in checks.items()}
    if tasks:
        await asyncio.wait(tasks.values(), timeout=deadline)
    passed = {}
    for name, task in tasks.items():
        # Any failure of a dependency, or no answer in time, means "not ready".
        passed[name] = task.done() and not task.cancelled() and task.exception() is None
        task.cancel()
    await asyncio.gather(*tasks.values(), return_exceptions=True)  # the cancelled ones closed
    return passed


def readiness(deadline: float = DEADLINE_SECONDS) -> dict[str, bool]:
    """Each dependency's name and whether it answered within ``deadline`` seconds."""
    checks: dict[str, Callable[[], Awaitable[None]]] = {}
    local: dict[str, bool] = {}
    if connections["default"].vendor == "postgresql":
        checks["database"] = _database
    else:
        local["database"] = _local_database()
    if settings.REDIS_URL:
        checks["redis"] = _redis
    return {**local, **asyncio.run(_checks(checks, deadline))}
