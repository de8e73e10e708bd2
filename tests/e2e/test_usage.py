"""Usage on real processes (docs/contract.md §19): Level 1 and Level 2 answers over REST
(gunicorn) and MCP (the MCP service) counted by the servers, flushed by a real worker on the
beat schedule, and shown exactly per revision, day and client within a minute; another tenant
hears 404."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from django.utils import timezone

from tests.e2e.processes import (
    celery_beat,
    celery_worker,
    free_port,
    gunicorn,
    mcp_service,
    process_env,
    redis_url,
    require_production_services,
    running,
    unique_queue,
)
from tests.factories import make_token, make_user, personal_ws, publish
from tests.mcp.conftest import with_mcp
from tests.support import wait_until

N_REST, M_REST, N_MCP, M_MCP = 4, 3, 2, 5

NO_OUTCOMES = {"success": 0, "partial": 0, "failure": 0, "rate": None}


def _usage_when(api: httpx.Client, path: str, level1: int, level2: int) -> dict[str, Any]:
    last: list[dict[str, Any]] = [{}]

    def reached() -> dict[str, Any] | None:
        last[0] = body = api.get(path, params={"days": "2"}).json()
        today = body["days"][-1]
        return body if (today["level1"], today["level2"]) == (level1, level2) else None

    found: dict[str, Any] = wait_until(
        reached,
        60,
        interval=0.5,
        message=lambda: f"usage did not reach {level1}/{level2}: {last[0]}",
    )
    return found


@pytest.mark.django_db(transaction=True)
def test_usage_adds_up_over_rest_and_mcp_on_a_real_worker(tmp_path: Path) -> None:
    require_production_services()
    owner = make_user("usage-owner")
    _, rest_secret = make_token(owner, name="rest-agent")
    _, mcp_secret = make_token(owner, name="OAuth: Claude")
    revision = publish(owner, personal_ws(owner), slug="counted").revision
    stranger = make_user("usage-stranger")
    _, stranger_secret = make_token(stranger)
    queue = unique_queue()
    env = process_env(
        XMEMO_TASK_QUEUE=queue,
        XMEMO_USAGE_FLUSH_SECONDS="1",
        XMEMO_CACHE_PREFIX=f"e2e-{uuid.uuid4().hex[:8]}",
    )
    web, mcp = free_port(), free_port()
    web_url, mcp_url = f"http://127.0.0.1:{web}", f"http://127.0.0.1:{mcp}"
    level2 = {"slug": "counted", "revision_id": revision.revision_id, "resource": "templates/t.md"}
    with (
        running(celery_worker(queue), env=env, log=tmp_path / "worker.log"),
        running(celery_beat(), env=env, log=tmp_path / "beat.log"),
        running(gunicorn(web), env=env, ready_url=f"{web_url}/healthz", log=tmp_path / "web.log"),
        running(mcp_service(mcp), env=env, ready_url=f"{mcp_url}/healthz", log=tmp_path / "m.log"),
        httpx.Client(base_url=web_url, headers={"Authorization": f"Bearer {rest_secret}"}) as api,
    ):
        for _ in range(N_REST):
            assert api.get("/v1/recall", params={"slug": "counted"}).status_code == 200
        for _ in range(M_REST):
            assert api.get("/v1/recall", params=level2).status_code == 200

        async def calls(client: Any) -> None:
            for _ in range(N_MCP):
                result = await client.call_tool("recall_cloud_skill", {"slug": "counted"})
                assert result.is_error is False, result
            for _ in range(M_MCP):
                result = await client.call_tool("recall_cloud_skill", level2)
                assert result.is_error is False, result

        with_mcp(mcp_url, mcp_secret, calls)

        path = f"/v1/skills/{revision.skill.skill_id}/usage"
        body = _usage_when(api, path, N_REST + N_MCP, M_REST + M_MCP)
        today = timezone.now().date().isoformat()
        assert body["days"][-1] == {
            "date": today,
            "level1": N_REST + N_MCP,
            "level2": M_REST + M_MCP,
        }
        assert body["by_revision"] == [
            {
                "revision_id": revision.revision_id,
                "revision_number": 1,
                "level1": N_REST + N_MCP,
                "level2": M_REST + M_MCP,
                "outcomes": NO_OUTCOMES,
            }
        ]
        assert sorted(body["by_client"], key=lambda c: c["name"]) == [
            {"name": "OAuth: Claude", "level1": N_MCP, "level2": M_MCP, "outcomes": NO_OUTCOMES},
            {"name": "rest-agent", "level1": N_REST, "level2": M_REST, "outcomes": NO_OUTCOMES},
        ]
        assert body["last_recalled_at"] is not None
        other = httpx.get(
            f"{web_url}{path}", headers={"Authorization": f"Bearer {stranger_secret}"}
        )
        assert other.status_code == 404


@pytest.mark.django_db(transaction=True)
def test_the_last_counts_of_a_burst_reach_redis_while_the_servers_idle(tmp_path: Path) -> None:
    """Counts wait in a worker's memory up to ``usage.HANDOFF_SECONDS``: an idle gunicorn worker
    and an idle MCP worker still hand them to Redis, with no request after them."""
    require_production_services()
    owner = make_user("idle-owner")
    _, secret = make_token(owner, name="idle-agent")
    publish(owner, personal_ws(owner), slug="idle")
    prefix = f"e2e-{uuid.uuid4().hex[:8]}"
    env = process_env(XMEMO_CACHE_PREFIX=prefix, XMEMO_USAGE_FLUSH_SECONDS="0")
    shared = redis.Redis.from_url(redis_url())
    web, mcp = free_port(), free_port()
    web_url, mcp_url = f"http://127.0.0.1:{web}", f"http://127.0.0.1:{mcp}"
    with (
        running(gunicorn(web), env=env, ready_url=f"{web_url}/healthz", log=tmp_path / "web.log"),
        running(mcp_service(mcp), env=env, ready_url=f"{mcp_url}/healthz", log=tmp_path / "m.log"),
    ):
        headers = {"Authorization": f"Bearer {secret}"}
        answer = httpx.get(f"{web_url}/v1/recall", params={"slug": "idle"}, headers=headers)
        assert answer.status_code == 200

        async def call(client: Any) -> None:
            result = await client.call_tool("recall_cloud_skill", {"slug": "idle"})
            assert result.is_error is False, result

        with_mcp(mcp_url, secret, call)

        def in_redis() -> int | None:
            held = sum(int(n) for n in shared.hvals(f"{prefix}:usage:counts"))
            return held if held == 2 else None

        # Well under the idle sync worker's own wake-up (half gunicorn's 30 s timeout).
        wait_until(in_redis, 8, interval=0.2, message="the idle servers kept their counts")
        shared.delete(f"{prefix}:usage:counts", f"{prefix}:usage:last")
