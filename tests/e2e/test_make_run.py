"""`make run` on the embedded default: SQLite, in-process jobs, demo data, a printed token that
works against the served API, console and MCP on one origin, and the periodic work of the beat
schedule run in the same process."""

from __future__ import annotations

import os
import queue
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from tests.e2e.processes import ROOT, free_port
from tests.support import wait_until

EMBEDDED_DROP = (
    "DATABASE_URL",
    "REDIS_URL",
    "SECRET_KEY",
    "XMEMO_DEBUG",
    "XMEMO_TEST_DB_NAME",
)


def _read_until_ready(proc: subprocess.Popen[str], deadline: float) -> tuple[str, list[str]]:
    """The printed token and every line up to "Ready"; the login and token are printed once
    the server listens (issue 25 #21), so the caller uses them without waiting. Lines are read
    in a thread, so a server that never says it is ready fails at the deadline."""
    assert proc.stdout is not None
    stdout = proc.stdout
    received: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in stdout:
            received.put(line)

    threading.Thread(target=read, daemon=True).start()
    lines: list[str] = []
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = received.get(timeout=left).rstrip()
        except queue.Empty:
            break
        lines.append(line)
        if line.startswith("Ready: "):
            tokens = [ln.split(": ", 1)[1].strip() for ln in lines if ln.startswith("Demo token: ")]
            assert len(tokens) == 1, lines
            return tokens[0], lines
    raise AssertionError("make run never said it is ready:\n" + "\n".join(lines))


def _wait_for_vectors(database: Path, timeout: float = 120) -> None:
    """The schedule the server runs embeds every skill's current revision (the demo data was
    saved by ``seed_demo`` before the server started: its sweep catches up)."""
    deadline = time.monotonic() + timeout
    while True:
        with sqlite3.connect(database, timeout=30) as db:
            wanted = db.execute(
                "SELECT count(*) FROM skills_app_skill WHERE current_revision_id IS NOT NULL"
            ).fetchone()[0]
            have = db.execute(
                "SELECT count(*) FROM skills_app_skill s JOIN skills_app_revisionembedding e"
                " ON e.revision_id = s.current_revision_id"
            ).fetchone()[0]
        if wanted and have == wanted:
            return
        assert time.monotonic() < deadline, f"{have} of {wanted} demo skills embedded"
        time.sleep(0.5)


def test_make_run_serves_demo_data_with_a_working_token(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in EMBEDDED_DROP}
    env["XMEMO_VAR_DIR"] = str(tmp_path)
    env["XMEMO_USAGE_FLUSH_SECONDS"] = "1"  # the usage flush of the schedule it runs
    port = free_port()
    proc = _make_run(env, port)
    try:
        token, lines = _read_until_ready(proc, time.monotonic() + 180)
        base = f"http://127.0.0.1:{port}"
        assert "Demo login: demo / demo" in lines
        assert lines[-1] == f"Ready: listening on {base} (Ctrl-C stops)"
        assert any(f"{base}/v1/docs" in line for line in lines)
        assert not any(line.startswith("Subject: ") for line in lines)  # seeding mails stay quiet
        headers = {"Authorization": f"Bearer {token}"}
        root = httpx.get(
            f"{base}/v1/recall", params={"slug": "incident-response-checklist"}, headers=headers
        )
        assert root.status_code == 200, root.text
        assert root.json()["data"]["resolved_by"] == "published"
        # Counted in the server's memory, stored by the schedule it runs: no worker, no Redis.
        usage = f"{base}/v1/skills/{root.json()['data']['skill_id']}/usage"
        wait_until(
            lambda: httpx.get(usage, headers=headers).json()["days"][-1]["level1"] == 1,
            60,
            interval=0.5,
            message="the usage count never reached the database",
        )
        search = httpx.get(f"{base}/v1/recall", params={"query": "deploy"}, headers=headers)
        assert "deploy-runbook" in [r["slug"] for r in search.json()["data"]["results"]]
        assert httpx.get(f"{base}/v1/recall", params={"query": "x"}).status_code == 401
        login = httpx.get(f"{base}/login/")
        assert login.status_code == 200
        assert "csrfmiddlewaretoken" in login.text
        mcp = httpx.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert mcp.status_code == 401, "MCP is served on the same origin and wants the token"
        assert (tmp_path / "xmemo.sqlite3").exists()
        _wait_for_vectors(tmp_path / "xmemo.sqlite3")
    finally:
        _stop(proc)


def _make_run(env: dict[str, str], port: int) -> subprocess.Popen[str]:
    venv = Path(sys.executable).parent.parent
    return subprocess.Popen(
        ["make", "--no-print-directory", "run", f"PORT={port}", f"VENV={venv}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _stop(proc: subprocess.Popen[str]) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=20)


def test_restarting_make_run_keeps_the_session_and_the_demo_token(tmp_path: Path) -> None:
    """Issue 37 #15: restarting `make run` signed the browser out and minted another
    never-expiring all-scope demo token each time. The second run prints the same token, the
    signed-in browser stays signed in, one demo token exists; each step is announced."""
    env = {k: v for k, v in os.environ.items() if k not in EMBEDDED_DROP}
    env["XMEMO_VAR_DIR"] = str(tmp_path)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    browser = httpx.Client(base_url=base)
    proc = _make_run(env, port)
    try:
        first, lines = _read_until_ready(proc, time.monotonic() + 180)
        login = browser.get("/login/")
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text)
        assert csrf is not None
        signed_in = browser.post(
            "/login/",
            data={"csrfmiddlewaretoken": csrf.group(1), "username": "demo", "password": "demo"},
        )
        assert signed_in.status_code == 302, signed_in.text
        assert browser.get("/w/demo/skills/").status_code == 200
    finally:
        _stop(proc)
    steps = [line for line in lines if line.startswith("make run: ")]
    assert [step.split(":", 2)[1].strip() for step in steps] == ["install", "migrate", "seed"]
    proc = _make_run(env, port)
    try:
        second, _ = _read_until_ready(proc, time.monotonic() + 180)
        assert second == first
        assert browser.get("/w/demo/skills/").status_code == 200  # still signed in
    finally:
        _stop(proc)
    with sqlite3.connect(tmp_path / "xmemo.sqlite3") as db:
        names = [row[0] for row in db.execute("SELECT name FROM skills_app_apitoken")]
    assert names.count("demo") == 1
    for name in ("secret_key", "demo-token"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o600, name
