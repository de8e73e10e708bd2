"""Scale-out (docs/contract.md §14): two gunicorn, two MCP services and two pairs of workers on
one PostgreSQL and one Redis behave as one deployment — a save is recalled fresh everywhere at
once, a revoked token fails everywhere, each job runs once, rate limits and usage add up."""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from skills_app.models import Job
from tests.e2e.processes import (
    celery_beat,
    celery_worker,
    execute_queue,
    free_port,
    gunicorn,
    mcp_service,
    process_env,
    require_production_services,
    running,
    unique_queue,
)
from tests.factories import make_token, make_user, personal_ws, publish
from tests.mcp.conftest import with_mcp

RATE = 10  # per token and hour: no window boundary inside the test


def _mcp_recall(url: str, secret: str, **arguments: str) -> Any:
    async def call(client: Any) -> Any:
        return await client.call_tool("recall_cloud_skill", arguments)

    return with_mcp(url, secret, call)


def _rest_recall(url: str, secret: str, **params: str) -> httpx.Response:
    return httpx.get(
        f"{url}/v1/recall", params=params, headers={"Authorization": f"Bearer {secret}"}
    )


@pytest.mark.django_db(transaction=True)
def test_two_of_everything_act_as_one_deployment(tmp_path: Path) -> None:
    require_production_services()
    owner = make_user("scaled")
    workspace = personal_ws(owner)
    first = publish(owner, workspace, slug="shared").revision
    secrets = {
        name: make_token(owner, name=name)[1]
        for name in ("writer", "revoked", "limited", "counter", "jobs", "reader")
    }
    revoked_token = make_token(owner, name="to-revoke")
    queue = unique_queue()
    env = process_env(
        XMEMO_TASK_QUEUE=queue,
        XMEMO_RATE_LIMIT=f"{RATE}/hour",
        XMEMO_USAGE_FLUSH_SECONDS="1",
        XMEMO_CACHE_PREFIX=f"e2e-{uuid.uuid4().hex[:8]}",
        # Revocation must reach the other processes by NOTIFY, not by the cache ageing out.
        XMEMO_AUTH_CACHE_SECONDS="600",
    )
    webs = [f"http://127.0.0.1:{free_port()}" for _ in range(2)]
    mcps = [f"http://127.0.0.1:{free_port()}" for _ in range(2)]
    worker_logs = [tmp_path / f"worker{n}.log" for n in range(4)]
    with ExitStack() as stack:
        for n, url in enumerate(webs):
            port = int(url.rsplit(":", 1)[1])
            stack.enter_context(
                running(
                    gunicorn(port), env=env, ready_url=f"{url}/healthz", log=tmp_path / f"w{n}.log"
                )
            )
        for n, url in enumerate(mcps):
            port = int(url.rsplit(":", 1)[1])
            stack.enter_context(
                running(
                    mcp_service(port),
                    env=env,
                    ready_url=f"{url}/healthz",
                    log=tmp_path / f"m{n}.log",
                )
            )
        # The workers after the servers: eight processes starting at once on two cores
        # took longer than a server is given to answer.
        for n, log in enumerate(worker_logs):
            which = queue if n % 2 == 0 else execute_queue(queue)
            stack.enter_context(running(celery_worker(which), env=env, log=log))
        stack.enter_context(running(celery_beat(), env=env, log=tmp_path / "beat.log"))
        for url in webs + mcps:  # the probes answer on both kinds of server
            assert httpx.get(f"{url}/readyz").json()["status"] == "ok"
        # Every process has resolved (and cached) the first revision and the token.
        reader = secrets["reader"]
        for url in webs:
            assert _rest_recall(url, reader, slug="shared").json()["data"]["revision_id"] == (
                first.revision_id
            )
        for url in mcps:
            result = _mcp_recall(url, reader, slug="shared")
            assert result.structured_content["data"]["revision_id"] == first.revision_id

        # 1. A save on one process is recalled fresh on every other at once.
        saved = httpx.post(
            f"{webs[0]}/v1/skills/save",
            headers={"Authorization": f"Bearer {secrets['writer']}"},
            json={
                "workspace": workspace.slug,
                "slug": "shared",
                "name": "Shared",
                "description": "Saved on one web process.",
                "instruction_body": "version two",
                "intent": "publish",
            },
        )
        assert saved.status_code in (200, 201), saved.text
        second = saved.json()["revision_id"]
        for url in webs:
            assert _rest_recall(url, reader, slug="shared").json()["data"]["revision_id"] == second
        for url in mcps:
            result = _mcp_recall(url, reader, slug="shared")
            assert result.structured_content["data"]["revision_id"] == second

        # 2. A token revoked on one process fails on every process at once.
        doomed_token, doomed = revoked_token
        for url in webs:
            assert _rest_recall(url, doomed, slug="shared").status_code == 200
        for url in mcps:
            assert _mcp_recall(url, doomed, slug="shared").is_error is False
        gone = httpx.delete(
            f"{webs[1]}/v1/tokens/{doomed_token.token_id}",
            headers={"Authorization": f"Bearer {secrets['writer']}"},
        )
        assert gone.status_code in (200, 204), gone.text
        for url in webs:
            assert _rest_recall(url, doomed, slug="shared").status_code == 401
        for url in mcps:
            refused = httpx.post(
                f"{url}/mcp",
                headers={
                    "Authorization": f"Bearer {doomed}",
                    "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream",
                },
                content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            )
            assert refused.status_code == 401

        # 3. Each job runs exactly once, whichever worker takes it.
        jobs_secret = secrets["jobs"]  # six requests: under the token's rate
        job_ids = [
            httpx.post(
                f"{webs[n % 2]}/v1/exports",
                json={"revision_id": second},
                headers={"Authorization": f"Bearer {jobs_secret}"},
            ).json()["job_id"]
            for n in range(6)
        ]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # read from the database: polls would count
            states = set(Job.objects.filter(job_id__in=job_ids).values_list("state", flat=True))
            if states == {"succeeded"}:
                break
            time.sleep(0.3)
        assert states == {"succeeded"}
        assert set(Job.objects.filter(job_id__in=job_ids).values_list("attempts", flat=True)) == {1}
        starts: Counter[str] = Counter()
        for log in worker_logs:
            for line in log.read_text(errors="replace").splitlines():
                if line.startswith("{"):
                    entry = json.loads(line)
                    if entry.get("event") == "job.start" and entry.get("job_id") in job_ids:
                        starts[entry["job_id"]] += 1
        assert starts == dict.fromkeys(job_ids, 1)

        # 4. One token's rate limit holds over all four servers together.
        limited = secrets["limited"]
        answers: list[int | str] = []
        for n in range(RATE + 6):
            if n % 2 == 0:
                answers.append(_rest_recall(webs[n % 4 // 2], limited, slug="shared").status_code)
            else:
                result = _mcp_recall(mcps[n % 4 // 2], limited, slug="shared")
                answer = json.loads(result.content[0].text)
                code = "ok" if not result.is_error else answer["error"]["code"]
                answers.append(200 if code == "ok" else 429 if code == "RATE_LIMITED" else code)
        assert answers.count(200) == RATE, answers
        assert answers.count(429) == 6, answers

        # 5. Usage adds up over the processes (each flushes its own counts; the workers store).
        counter = secrets["counter"]
        for url in webs:
            for _ in range(2):
                assert _rest_recall(url, counter, slug="shared").status_code == 200
        for url in mcps:
            for _ in range(3):
                assert _mcp_recall(url, counter, slug="shared").is_error is False
        deadline = time.monotonic() + 60
        by_client: dict[str, Any] = {}
        while time.monotonic() < deadline:
            body = httpx.get(
                f"{webs[1]}/v1/skills/{first.skill.skill_id}/usage",
                params={"days": "1"},
                headers={"Authorization": f"Bearer {secrets['writer']}"},
            ).json()
            by_client = {row["name"]: row for row in body["by_client"]}
            if by_client.get("counter", {}).get("level1") == 10:
                break
            time.sleep(0.5)
        assert by_client["counter"]["level1"] == 10
        assert by_client["counter"]["level2"] == 0
