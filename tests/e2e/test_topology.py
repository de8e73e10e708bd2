"""The production topology as real processes: gunicorn (REST), uvicorn workers (MCP,
xmemo/serve.py), a Celery worker,
PostgreSQL and Redis. An import, an export and a sandboxed execution go in over HTTP and are
polled to the end; the MCP SDK's client recalls through the MCP service as production runs it."""

from __future__ import annotations

import inspect
import io
import re
import zipfile
from pathlib import Path

import httpx
import pytest

from skills_app.models import SkillRevision
from tests.e2e.processes import (
    MCP_SERVICE,
    ROOT,
    celery_worker,
    execute_queue,
    free_port,
    gunicorn,
    mcp_service,
    poll_job,
    process_env,
    require_production_services,
    running,
    unique_queue,
)
from tests.factories import make_token, make_user, personal_ws, publish
from tests.formats.helpers import fixture_zip
from tests.mcp.conftest import with_mcp


@pytest.mark.django_db(transaction=True)
def test_jobs_run_on_a_real_worker_behind_gunicorn(tmp_path: Path, bwrap: str) -> None:
    require_production_services()
    user = make_user("e2e-owner")
    _, secret = make_token(user)
    queue = unique_queue()
    env = process_env(XMEMO_TASK_QUEUE=queue)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with (
        running(celery_worker(queue, execute_queue(queue)), env=env, log=tmp_path / "worker.log"),
        running(gunicorn(port), env=env, ready_url=f"{base}/v1/schema", log=tmp_path / "web.log"),
        httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {secret}"}, timeout=10
        ) as api,
    ):
        started = api.post(
            "/v1/imports",
            files={"file": ("du.zip", fixture_zip("disk-usage"), "application/zip")},
            data={"workspace": "e2e-owner", "intent": "publish"},
        )
        assert started.status_code == 202, started.text
        assert started.json()["state"] == "queued"
        job = poll_job(api, started.json()["job_id"])
        assert job["state"] == "succeeded", (job, (tmp_path / "worker.log").read_text()[-2000:])
        revision_id = job["result"]["revision_id"]
        assert SkillRevision.objects.get(revision_id=revision_id).state == "published"

        export = poll_job(
            api, api.post("/v1/exports", json={"revision_id": revision_id}).json()["job_id"]
        )
        assert export["state"] == "succeeded", export
        archive = api.get(export["result"]["download_url"])
        assert archive.status_code == 200
        assert "SKILL.md" in zipfile.ZipFile(io.BytesIO(archive.content)).namelist()

        root = api.get("/v1/recall", params={"slug": "disk-usage"}).json()["data"]
        assert root["revision_id"] == revision_id
        executed = api.post(
            f"/v1/revisions/{revision_id}/execute",
            json={"resource": "du.py", "args": {"path": "/skill", "top": 5}},
        )
        assert executed.status_code == 202, executed.text
        result = poll_job(api, executed.json()["job_id"])
        assert result["state"] == "succeeded", (
            result,
            (tmp_path / "worker.log").read_text()[-2000:],
        )
        assert [e["path"] for e in result["result"]["output"]["entries"]] == ["/skill/lib"]

        # A script that never ends is killed at its timeout; the worker takes the next job.
        looping = api.post(
            "/v1/skills/save",
            json={
                "workspace": "e2e-owner",
                "slug": "spinner",
                "name": "Spinner",
                "description": "Never finishes.",
                "instruction_body": "Do not run this.",
                "frontmatter": {"timeout_seconds": 1},
                "components": [
                    {"logical_path": "spin.py", "type": "script", "content": "while True: pass\n"}
                ],
            },
        ).json()
        spun = api.post(
            f"/v1/revisions/{looping['revision_id']}/execute", json={"resource": "spin.py"}
        )
        failed = poll_job(api, spun.json()["job_id"])
        assert failed["state"] == "failed"
        assert failed["error"]["code"] == "SCRIPT_FAILED"
        assert failed["error"]["details"]["reason"] == "TIMEOUT"
        again = api.post(
            f"/v1/revisions/{revision_id}/execute",
            json={"resource": "du.py", "args": {"path": "/skill"}},
        )
        after = poll_job(api, again.json()["job_id"])
        assert after["state"] == "succeeded", (after, (tmp_path / "worker.log").read_text()[-3000:])


@pytest.mark.django_db(transaction=True)
def test_mcp_is_served_as_in_production(tmp_path: Path) -> None:
    require_production_services()
    user = make_user("mcp-e2e")
    _, secret = make_token(user)
    revision = publish(user, personal_ws(user), slug="deploy").revision
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "mcp.log"
    with running(mcp_service(port), env=process_env(), ready_url=f"{base}/v1/schema", log=log):
        for mode in ("auto", "legacy"):  # the per-request protocol and the handshake era
            result = with_mcp(
                base, secret, lambda c: c.call_tool("recall_cloud_skill", {"slug": "deploy"}), mode
            )
            assert result.is_error is False, result
            assert result.structured_content["data"]["revision_id"] == revision.revision_id


def test_the_mcp_service_runs_with_the_same_command_everywhere() -> None:
    """`make serve-mcp`, docker/compose.yml, the tests above and `make bench` run one server
    command: uvicorn workers on a listener each (test_serve.py)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    serve_mcp = re.search(r"^serve-mcp:.*\n\t(.*)$", makefile, re.MULTILINE)
    assert serve_mcp is not None
    assert f"$(PY) {' '.join(MCP_SERVICE)} --workers 2 " in serve_mcp.group(1)
    compose = (ROOT / "docker" / "compose.yml").read_text(encoding="utf-8")
    service = ", ".join(f'"{part}"' for part in MCP_SERVICE)
    command = re.search(r'command: \["python", ' + re.escape(service) + r"(.*)\]", compose)
    assert command is not None
    assert '"--workers", "2"' in command.group(1)
    from bench.recall import _start_mcp_server

    source = re.sub(r"\s", "", inspect.getsource(_start_mcp_server))
    assert "sys.executable," + "".join(f'"{part}",' for part in MCP_SERVICE) in source
