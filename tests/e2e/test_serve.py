"""The MCP service's process launcher: kept-alive connections are dealt to the workers evenly.

With every worker accepting from one shared socket, a burst of connections lands wherever the
first worker to wake takes it (16 clients split anywhere from 8/8 to 16/0 under load), and on
kept-alive connections the split stays as it fell: the busier worker sets the latency tail.
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

import pytest

from tests.e2e.processes import (
    free_port,
    mcp_service,
    process_env,
    require_production_services,
    running,
)

CONNECTIONS = 16
pytestmark = pytest.mark.django_db(transaction=True)


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as handle:
        return [int(child) for child in handle.read().split()]


def _established_inodes(port: int) -> set[str]:
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table, encoding="ascii") as handle:
            for line in handle.readlines()[1:]:
                fields = line.split()
                local, state, inode = fields[1], fields[3], fields[9]
                if state == "01" and int(local.rsplit(":", 1)[1], 16) == port:
                    inodes.add(inode)
    return inodes


def _connections_held(pid: int, inodes: set[str]) -> int:
    held = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:[") and target[8:-1] in inodes:
            held += 1
    return held


def _burst_split(launcher: int, port: int, count: int) -> list[int]:
    """How ``count`` kept-alive clients connecting at once (as a load generator or a proxy's
    upstream pool does), each answered once, are held by the workers, busiest first."""
    clients = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(count)]
    try:
        request = b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n"
        for client in clients:
            client.sendall(request)
        for client in clients:
            assert client.recv(65536).startswith(b"HTTP/1.1 401 "), "the door answers"
        inodes = _established_inodes(port)
        held = [_connections_held(child, inodes) for child in _children(launcher)]
        return sorted((n for n in held if n), reverse=True)
    finally:
        for client in clients:
            client.close()


@contextmanager
def _service(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    require_production_services()
    port = free_port()
    ready = f"http://127.0.0.1:{port}/v1/schema"
    with running(mcp_service(port), env=process_env(), ready_url=ready, log=tmp_path / "log") as p:
        yield p, port


def _wait_for_workers(launcher: int, count: int, port: int) -> list[int]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        workers = _children(launcher)
        if len(workers) == count:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return workers
            except OSError:
                pass
        time.sleep(0.2)
    raise AssertionError(f"{count} workers did not come up")


def _wait_until_every_worker_serves(launcher: int, port: int) -> None:
    """The service answers once one worker is up; until the other has started, every connection
    goes to the one that has (on a slow machine, several seconds)."""
    deadline = time.monotonic() + 60
    while len(_burst_split(launcher, port, 2)) < 2:
        assert time.monotonic() < deadline, "the second worker never took a connection"
        time.sleep(0.2)


def test_kept_alive_connections_are_dealt_evenly_to_the_workers(tmp_path: Path) -> None:
    with _service(tmp_path) as (launcher, port):
        _wait_until_every_worker_serves(launcher.pid, port)
        for _ in range(3):  # every burst, not a lucky one
            split = _burst_split(launcher.pid, port, CONNECTIONS)
            assert split == [CONNECTIONS // 2, CONNECTIONS // 2]


def test_a_worker_that_dies_is_replaced_and_the_service_keeps_answering(tmp_path: Path) -> None:
    with _service(tmp_path) as (launcher, port):
        workers = _wait_for_workers(launcher.pid, 2, port)
        os.kill(workers[0], signal.SIGKILL)
        deadline = time.monotonic() + 30
        while workers[0] in _children(launcher.pid) or len(_children(launcher.pid)) < 2:
            assert time.monotonic() < deadline, "the dead worker was not replaced"
            time.sleep(0.1)
        replaced = _wait_for_workers(launcher.pid, 2, port)
        assert workers[1] in replaced
        assert workers[0] not in replaced
        # Until the new worker has started, the other one takes every connection (none waits
        # on a worker that is still importing); then both share them again.
        splits: list[list[int]] = []
        while time.monotonic() < deadline and splits[-1:] != [[2, 2]]:
            split = _burst_split(launcher.pid, port, 4)
            # A burst whose connections are not all seen in a worker yet (still being handed
            # over while the new worker starts) says nothing about the split: sample again.
            if sum(split) == 4:
                splits.append(split)
            time.sleep(0.2)
        assert splits[-1:] == [[2, 2]], splits
        assert all(split in ([4], [2, 2]) for split in splits), splits


def test_stopping_the_service_stops_its_workers(tmp_path: Path) -> None:
    with _service(tmp_path) as (launcher, port):
        workers = _wait_for_workers(launcher.pid, 2, port)
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
