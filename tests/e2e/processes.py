"""Real server and worker processes for end-to-end tests, pointed at the test database."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx
import redis
from django.db import connection

from tests.support import require_service, wait_until

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def redis_url() -> str:
    return os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"


def require_production_services() -> None:
    require_service(
        "PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL to PostgreSQL"
    )
    try:
        ok = bool(redis.Redis.from_url(redis_url(), socket_timeout=2).ping())
    except redis.RedisError:
        ok = False
    require_service("Redis", ok, f"no Redis at {redis_url()}")


def process_env(**extra: str) -> dict[str, str]:
    """The environment of a production process using this test run's database and Redis."""
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    # XMEMO_ASGI is the ASGI entry's own mark (xmemo/asgi.py): each server sets it for itself.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST") and k != "XMEMO_ASGI"}
    env.update(
        DATABASE_URL=url,
        REDIS_URL=redis_url(),
        SECRET_KEY="e2e-secret",
        XMEMO_DEBUG="0",
        XMEMO_SECURE_COOKIES="0",
        XMEMO_TASKS_EAGER="0",
        XMEMO_CONN_MAX_AGE="0",
    )
    env.update(extra)
    return env


def unique_queue() -> str:
    return f"e2e-{uuid.uuid4().hex[:8]}"


@contextmanager
def running(
    cmd: Sequence[str], *, env: dict[str, str], ready_url: str | None = None, log: Path
) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        proc = subprocess.Popen(list(cmd), cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            if ready_url is not None:
                wait_http(ready_url, proc, log)
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def wait_http(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 180) -> None:
    """Wait until ``url`` answers or ``proc`` exits. Generous on purpose: a server starting on a
    loaded machine (many test processes on two cores) takes long to import and to answer its
    first request, and the wait ends as soon as it answers, so a long bound costs nothing."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited early:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            # A first answer may take long (the schema is built on first ask): still an answer.
            httpx.get(url, timeout=max(10.0, deadline - time.monotonic()))
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError(
        f"{url} did not answer in {timeout}s:\n{log.read_text(errors='replace')[-3000:]}"
    )


GUNICORN_WORKERS = 2


def gunicorn(port: int) -> list[str]:
    return [
        str(BIN / "gunicorn"),
        "xmemo.wsgi:application",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(GUNICORN_WORKERS),
    ]


def uvicorn(port: int, *flags: str) -> list[str]:
    """The project's ASGI application (console, REST and /mcp) under uvicorn on loopback."""
    return [
        str(BIN / "uvicorn"),
        "xmemo.asgi:application",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        *flags,
    ]


# The MCP service as `make serve-mcp`, docker/compose.yml and `make bench` run it: uvicorn
# workers (uvloop, httptools), each on a SO_REUSEPORT listener of its own (xmemo/serve.py).
MCP_SERVICE = ("-m", "xmemo.serve")


def mcp_service(port: int) -> list[str]:
    return [str(BIN / "python"), *MCP_SERVICE, "--host", "127.0.0.1", "--port", str(port)]


def execute_queue(queue: str) -> str:
    """The executions' queue next to ``queue`` (the settings' default naming)."""
    return f"{queue}-execute"


def celery_worker(*queues: str, concurrency: int = 1) -> list[str]:
    return [
        str(BIN / "celery"),
        "-A",
        "xmemo",
        "worker",
        "--loglevel",
        "INFO",
        "--concurrency",
        str(concurrency),
        "-Q",
        ",".join(queues),
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]


def celery_beat() -> list[str]:
    """The one scheduler (``settings.CELERY_BEAT_SCHEDULE``): sends the periodic jobs to the
    workers of the environment's queue (``XMEMO_TASK_QUEUE``) as they fall due."""
    return [str(BIN / "celery"), "-A", "xmemo", "beat", "--loglevel", "INFO"]


def redis_server(port: int) -> list[str]:
    """A Redis of the test's own (one it may stop), never the shared one."""
    return [
        "redis-server",
        "--bind",
        "127.0.0.1",
        "--port",
        str(port),
        "--save",
        "",
        "--appendonly",
        "no",
    ]


def wait_redis(port: int) -> None:
    """Wait until a test's own ``redis_server`` answers."""

    def answers() -> bool:
        try:
            return bool(redis.Redis(port=port, socket_timeout=0.5).ping())
        except redis.RedisError:
            return False

    wait_until(answers, 10, interval=0.1, message="the test's own Redis did not start")


def poll_job(client: httpx.Client, job_id: str, timeout: float = 60) -> dict:
    seen_states: list[str] = []

    def finished() -> dict | None:
        body = client.get(f"/v1/jobs/{job_id}").json()
        seen_states.append(body["state"])
        return body if body["state"] in ("succeeded", "failed") else None

    body: dict = wait_until(
        finished,
        timeout,
        interval=0.2,
        message=lambda: f"job {job_id} did not finish: states {seen_states}",
    )
    body["seen_states"] = seen_states
    return body
