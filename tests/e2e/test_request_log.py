"""One JSON line per request on standard error, under gunicorn (docs/contract.md §19), and the
worker's job lines carrying the request id that enqueued the job."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.e2e.processes import (
    GUNICORN_WORKERS,
    celery_worker,
    free_port,
    gunicorn,
    poll_job,
    process_env,
    require_production_services,
    running,
    unique_queue,
)
from tests.factories import make_token, make_user, personal_ws, publish
from tests.support import wait_until


def _lines(log: Path, key: str, value: str) -> list[dict]:
    found = []
    for line in log.read_text(errors="replace").splitlines():
        if not line.startswith("{"):
            continue
        entry = json.loads(line)
        if entry.get(key) == value:
            found.append(entry)
    return found


def _wait_lines(log: Path, key: str, value: str, count: int) -> list[dict]:
    def enough() -> list[dict] | None:
        found = _lines(log, key, value)
        return found if len(found) >= count else None

    found: list[dict] = wait_until(
        enough,
        30,
        interval=0.2,
        message=lambda: f"fewer than {count} lines with {key}={value}:\n{log.read_text()[-3000:]}",
    )
    return found


@pytest.mark.django_db(transaction=True)
def test_each_request_logs_one_json_line_and_echoes_its_request_id(tmp_path: Path) -> None:
    require_production_services()
    user = make_user("logged")
    token, secret = make_token(user)
    publish(user, personal_ws(user), slug="traced")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    queue = unique_queue()
    env = process_env(XMEMO_TASK_QUEUE=queue)
    web_log, worker_log = tmp_path / "web.log", tmp_path / "worker.log"
    with (
        running(celery_worker(queue), env=env, log=worker_log),
        running(gunicorn(port), env=env, ready_url=f"{base}/healthz", log=web_log),
        httpx.Client(base_url=base, headers={"Authorization": f"Bearer {secret}"}) as api,
    ):
        sent = api.get(
            "/v1/recall", params={"slug": "traced"}, headers={"X-Request-ID": "lb-7f3a.01"}
        )
        assert sent.status_code == 200
        assert sent.headers["X-Request-ID"] == "lb-7f3a.01"
        (line,) = _wait_lines(web_log, "request_id", "lb-7f3a.01", 1)
        assert line["method"] == "GET"
        assert line["route"] == "v1/recall"
        assert line["status"] == 200
        assert isinstance(line["duration_ms"], float)
        assert line["duration_ms"] > 0
        assert line["token_id"] == token.token_id
        assert line["workspace"] == "logged"
        assert secret not in web_log.read_text()

        # Not sane (too long, or characters a log reader could trip on): a fresh id instead.
        for bad in ("x" * 300, 'a b"}{forged'):
            fresh = api.get("/v1/skills", headers={"X-Request-ID": bad})
            rid = fresh.headers["X-Request-ID"]
            assert rid != bad
            assert 8 <= len(rid) <= 64
            (other,) = _wait_lines(web_log, "request_id", rid, 1)
            # The URL pattern, not the path the client sent.
            assert other["route"] == "v1/skills"
        missing = httpx.get(f"{base}/v1/skills/skill_doesnotexist")
        (unauth,) = _wait_lines(web_log, "request_id", missing.headers["X-Request-ID"], 1)
        assert unauth["route"] == "v1/skills/<str:skill_id>"
        assert unauth["status"] == 401
        assert unauth["token_id"] is None

        # The job enqueued by a request: its start and finish carry that request's id.
        started = api.post(
            "/v1/exports",
            json={"workspace": "logged"},
            headers={"X-Request-ID": "export-req-1"},
        )
        assert started.status_code == 202, started.text
        job_id = started.json()["job_id"]
        assert poll_job(api, job_id)["state"] == "succeeded"
        jobs = _wait_lines(worker_log, "job_id", job_id, 2)
        assert [j["event"] for j in jobs] == ["job.start", "job.finish"]
        assert {j["request_id"] for j in jobs} == {"export-req-1"}


METRICS_TOKEN = "scrape-secret-log-0123456789"


@pytest.mark.django_db(transaction=True)
def test_refusals_write_only_their_json_line_and_metrics_has_its_route(tmp_path: Path) -> None:
    """Issue 37 #12: every 4xx also wrote Django's plain-text ``Not Found: …`` line to standard
    error, so the log was not one JSON line per request; ``/metrics`` was logged as
    ``unmatched``."""
    require_production_services()
    user = make_user("refused")
    _, secret = make_token(user)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = process_env(XMEMO_METRICS_TOKEN=METRICS_TOKEN, XMEMO_TASK_QUEUE=unique_queue())
    web_log = tmp_path / "web.log"
    with (
        running(gunicorn(port), env=env, ready_url=f"{base}/healthz", log=web_log),
        httpx.Client(base_url=base, headers={"Authorization": f"Bearer {secret}"}) as api,
    ):
        # /healthz answers once one worker is up; gunicorn's own line for the next may come
        # later. Count from after every worker's boot line, so only the requests' lines follow.
        wait_until(
            lambda: web_log.read_text(errors="replace").count("Booting worker") >= GUNICORN_WORKERS,
            60,
            interval=0.1,
            message=lambda: f"not every gunicorn worker booted:\n{web_log.read_text()[-3000:]}",
        )
        started = len(web_log.read_text(errors="replace").splitlines())
        ids = []
        for method, path, status in [
            ("GET", "/v1/skills/skill_nope", 404),
            ("GET", "/no/such/page", 404),
            ("POST", "/v1/skills/save", 400),
            ("GET", "/v1/workspaces/nobody/audit", 404),
            ("DELETE", "/v1/recall", 405),
        ]:
            answer = api.request(method, path, json={} if method == "POST" else None)
            assert answer.status_code == status, (path, answer.text)
            ids.append(answer.headers["X-Request-ID"])
        scraped = httpx.get(f"{base}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
        assert scraped.status_code == 200
        (metrics,) = _wait_lines(web_log, "request_id", scraped.headers["X-Request-ID"], 1)
        assert metrics["route"] == "metrics"
        for rid in ids:
            _wait_lines(web_log, "request_id", rid, 1)
        written = web_log.read_text(errors="replace").splitlines()[started:]
        assert [line for line in written if not line.startswith("{")] == []
        assert len(written) == len(ids) + 1
