"""The MCP service's launcher (``python -m xmemo.serve``): uvicorn's own workers, kept alive.

A worker that dies is replaced while the others keep answering; SIGTERM stops every worker and
closes the port. The launcher is uvicorn's supervisor, not one of ours (docs/operations.md,
*Fast paths on private APIs*: the connection dealer measured no gain and was removed).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.e2e.processes import (
    free_port,
    mcp_service,
    process_env,
    require_production_services,
    running,
)

pytestmark = pytest.mark.django_db(transaction=True)


def _workers(pid: int) -> list[int]:
    """The launcher's worker processes (multiprocessing's spawned children, not its helpers)."""
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as handle:
        children = [int(child) for child in handle.read().split()]
    workers = []
    for child in children:
        try:
            with open(f"/proc/{child}/cmdline", "rb") as handle:
                if b"spawn_main" in handle.read():
                    workers.append(child)
        except OSError:  # gone meanwhile
            continue
    return workers


@contextmanager
def _service(log: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    require_production_services()
    port = free_port()
    ready = f"http://127.0.0.1:{port}/v1/schema"
    with running(mcp_service(port), env=process_env(), ready_url=ready, log=log) as process:
        yield process, port


def _started(log: Path, pid: int) -> bool:
    return f"Started server process [{pid}]" in log.read_text(errors="replace")


def _wait_for_workers(launcher: int, count: int, log: Path) -> list[int]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        workers = _workers(launcher)
        if len(workers) == count and all(_started(log, pid) for pid in workers):
            return workers
        time.sleep(0.2)
    raise AssertionError(f"{count} workers did not start: {log.read_text(errors='replace')}")


def _answers(port: int) -> int:
    return httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=10).status_code


def test_the_launcher_is_uvicorns_supervisor(tmp_path: Path) -> None:
    log = tmp_path / "log"
    with _service(log) as (launcher, port):
        workers = _wait_for_workers(launcher.pid, 2, log)
        assert f"Started parent process [{launcher.pid}]" in log.read_text()
        assert launcher.pid not in workers
        assert _answers(port) == 401  # the door asks for a token


def test_a_worker_that_dies_is_replaced_and_the_service_keeps_answering(tmp_path: Path) -> None:
    log = tmp_path / "log"
    with _service(log) as (launcher, port):
        workers = _wait_for_workers(launcher.pid, 2, log)
        os.kill(workers[0], signal.SIGKILL)
        deadline = time.monotonic() + 60
        answered = []
        while (fresh := set(_workers(launcher.pid)) - set(workers)) == set() or not all(
            _started(log, pid) for pid in fresh
        ):
            assert time.monotonic() < deadline, "the dead worker was not replaced"
            answered.append(_answers(port))  # the other worker answers meanwhile
            time.sleep(0.1)
        replaced = _wait_for_workers(launcher.pid, 2, log)
        assert workers[1] in replaced
        assert workers[0] not in replaced
        assert answered, "the replacement came up before a single request was made"
        assert set(answered) == {401}, answered
        assert _answers(port) == 401


def test_stopping_the_service_stops_its_workers(tmp_path: Path) -> None:
    log = tmp_path / "log"
    with _service(log) as (launcher, port):
        workers = _wait_for_workers(launcher.pid, 2, log)
        launcher.send_signal(signal.SIGTERM)
        assert launcher.wait(timeout=30) == 0
    for worker in workers:
        assert not Path(f"/proc/{worker}").exists() or _zombie(worker), f"worker {worker} left"
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=1)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
