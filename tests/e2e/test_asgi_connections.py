"""Under uvicorn (ASGI) every request runs in a thread of its own; the database connections a
server process holds stay bounded by ``XMEMO_DB_POOL_MAX_SIZE`` however many requests arrive."""

from __future__ import annotations

import asyncio
import threading
import uuid
from pathlib import Path

import httpx
import psycopg
import pytest
from django.db import connection

from tests.e2e.processes import (
    free_port,
    process_env,
    require_production_services,
    running,
    uvicorn,
)
from tests.factories import make_token, make_user, personal_ws, publish

POOL_SIZE = 4
BURSTS, CONCURRENT = 3, 32


def _server_connections(app_name: str) -> int:
    db = connection.settings_dict
    with psycopg.connect(
        host=db["HOST"] or "127.0.0.1",
        port=int(db["PORT"] or 5432),
        user=db["USER"],
        dbname=db["NAME"],
        autocommit=True,
    ) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND application_name = %s",
            [db["NAME"], app_name],
        ).fetchone()
    assert row is not None
    return int(row[0])


async def _burst(base: str, secret: str) -> list[int]:
    async with httpx.AsyncClient(
        base_url=base, headers={"Authorization": f"Bearer {secret}"}, timeout=180
    ) as client:
        answers = await asyncio.gather(
            *(
                client.get("/v1/recall", params={"slug": "pooled"})
                if i % 2
                else client.get("/v1/skills")
                for i in range(CONCURRENT)
            )
        )
    return [a.status_code for a in answers]


@pytest.mark.django_db(transaction=True)
def test_uvicorn_holds_no_more_connections_than_its_pool(tmp_path: Path) -> None:
    require_production_services()
    user = make_user("pool-owner")
    _, secret = make_token(user)
    publish(user, personal_ws(user), slug="pooled")
    app_name = f"xmemo-asgi-{uuid.uuid4().hex[:8]}"  # only this server's connections count
    # Requests queue for the pool's 4 connections: on a loaded machine longer than the pool's
    # default 30 s wait, which would answer 500; the bound is what is tested, not the speed.
    env = process_env(
        PGAPPNAME=app_name,
        XMEMO_DB_POOL_MAX_SIZE=str(POOL_SIZE),
        XMEMO_DB_POOL_TIMEOUT="170",
        XMEMO_CONN_MAX_AGE="60",
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = uvicorn(port, "--log-level", "warning")
    samples: list[int] = []
    sampling = threading.Event()

    def sample() -> None:
        while not sampling.is_set():
            samples.append(_server_connections(app_name))
            sampling.wait(0.05)

    with running(server, env=env, ready_url=f"{base}/v1/schema", log=tmp_path / "asgi.log"):
        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            statuses = [s for _ in range(BURSTS) for s in asyncio.run(_burst(base, secret))]
        finally:
            sampling.set()
            sampler.join()
        after = _server_connections(app_name)
        # Pooled sessions keep following committed changes (recall caches, LISTEN/NOTIFY):
        # whichever session answers, a newly published revision shows at once.
        newer = publish(user, personal_ws(user), slug="pooled", instruction_body="v2").revision
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {secret}"}) as api:
            served = {
                api.get("/v1/recall", params={"slug": "pooled"}).json()["data"]["revision_id"]
                for _ in range(20)
            }
    assert statuses == [200] * (BURSTS * CONCURRENT), (tmp_path / "asgi.log").read_text()[-3000:]
    assert max(samples) > 0  # the sampler saw the server's connections at all
    assert max(samples) <= POOL_SIZE, max(samples)
    assert after <= POOL_SIZE
    assert served == {newer.revision_id}
