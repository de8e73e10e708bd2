"""The ASGI service (``/mcp``): uvicorn workers (uvloop, httptools), each on a listener of its own.

    python -m xmemo.serve --host 0.0.0.0 --port 8001 --workers 2 [--proxy-headers]

With ``uvicorn --workers N`` every worker accepts from one shared socket, and a burst of
kept-alive connections stays split as it fell (16/0 in 2 of 26 bench windows: MCP at about
60 % of its throughput). Here each worker binds its own ``SO_REUSEPORT`` listener, so the
kernel spreads new connections over the workers by their addresses' hash; this process only
starts the workers, starts another when one dies and stops them on SIGTERM. Linux only."""

from __future__ import annotations

import argparse
import ctypes
import functools
import logging
import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field

import uvicorn

from skills_app.infra.multiproc import prepare as prepare_metrics_dir

APP = "xmemo.asgi:application"
LOG = logging.getLogger("xmemo.serve")
# A worker that dies younger than this is started again only after the same pause, so a
# worker that cannot start (no database, a broken setting) does not spin the machine.
YOUNG_SECONDS = 1.0
PR_SET_PDEATHSIG = 1  # prctl(2), linux/prctl.h


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m xmemo.serve", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--backlog", type=int, default=2048)
    parser.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )
    parser.add_argument(
        "--proxy-headers",
        action="store_true",
        help="trust X-Forwarded-Proto/For from --forwarded-allow-ips (behind a proxy)",
    )
    parser.add_argument("--forwarded-allow-ips", default="127.0.0.1")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return parser


def _listener(args: argparse.Namespace) -> socket.socket:
    """A socket bound to the service's address beside the other workers' (not yet listening)."""
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((args.host, args.port))
    return sock


def _serve_worker(args: argparse.Namespace) -> None:
    config = uvicorn.Config(
        APP,
        loop="uvloop",
        http="httptools",
        backlog=args.backlog,
        log_level=args.log_level,
        proxy_headers=args.proxy_headers,
        forwarded_allow_ips=args.forwarded_allow_ips,
    )
    # uvicorn listens on the socket once the application has started, not before: until then
    # the kernel gives this worker's share of connections to the others.
    uvicorn.Server(config).run(sockets=[_listener(args)])


def _die_with(parent: int) -> None:
    """In a new worker before it runs: SIGTERM when the launcher dies, even by SIGKILL, so no
    orphan keeps serving (old code, perhaps) on the shared port beside the next launcher."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM) != 0 or os.getppid() != parent:
        os._exit(1)  # already orphaned, or the kernel would not say


@dataclass
class _Worker:
    process: subprocess.Popen[bytes]
    pidfd: int
    started: float = field(default_factory=time.monotonic)


class _Supervisor:
    """Keeps ``args.workers`` workers running until SIGTERM or SIGINT, then stops them."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.workers: list[_Worker] = []
        self.selector = selectors.DefaultSelector()
        self.stopping = False

    def _spawn(self) -> _Worker:
        command = [sys.executable, "-m", "xmemo.serve", "--worker", *self._worker_args()]
        process = subprocess.Popen(command, preexec_fn=functools.partial(_die_with, os.getpid()))
        worker = _Worker(process=process, pidfd=os.pidfd_open(process.pid))
        self.selector.register(worker.pidfd, selectors.EVENT_READ, worker)
        return worker

    def _worker_args(self) -> list[str]:
        args = self.args
        flags = ["--host", args.host, "--port", str(args.port), "--backlog", str(args.backlog)]
        flags += ["--log-level", args.log_level]
        if args.proxy_headers:
            flags += ["--proxy-headers", "--forwarded-allow-ips", args.forwarded_allow_ips]
        return flags

    def _replace(self, dead: _Worker) -> None:
        self.selector.unregister(dead.pidfd)
        os.close(dead.pidfd)
        code = dead.process.wait()
        index = self.workers.index(dead)
        if self.stopping:
            del self.workers[index]
            return
        LOG.warning("worker %d exited (%s); starting another", dead.process.pid, code)
        if time.monotonic() - dead.started < YOUNG_SECONDS:
            time.sleep(YOUNG_SECONDS)
        self.workers[index] = self._spawn()

    def run(self) -> int:
        wake_r, wake_w = socket.socketpair()
        wake_r.setblocking(False)
        wake_w.setblocking(False)
        signal.set_wakeup_fd(wake_w.fileno())
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._on_signal)
        self.selector.register(wake_r, selectors.EVENT_READ, None)
        self.workers = [self._spawn() for _ in range(self.args.workers)]
        LOG.info(
            "serving %s on http://%s:%d with %d workers",
            APP,
            self.args.host,
            self.args.port,
            self.args.workers,
        )
        signalled = False
        while self.workers:
            for key, _ in self.selector.select():
                if key.data is None:
                    wake_r.recv(64)
                else:
                    self._replace(key.data)
            if self.stopping and not signalled:
                signalled = True
                for worker in self.workers:
                    worker.process.send_signal(signal.SIGTERM)
        return 0

    def _on_signal(self, signum: int, frame: object) -> None:
        self.stopping = True


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.worker:
        _serve_worker(args)
        return 0
    if args.port == 0:
        _parser().error("--port 0 would give each worker a port of its own: name one")
    try:
        _listener(args).close()  # fail here, with why, not in every worker
    except OSError as exc:
        _parser().error(f"cannot listen on {args.host}:{args.port}: {exc.strerror}")
    logging.basicConfig(level=args.log_level.upper(), format="%(message)s")
    # The workers count into one fresh directory that /metrics adds up (infra/multiproc.py).
    prepare_metrics_dir()
    return _Supervisor(args).run()


if __name__ == "__main__":
    sys.exit(main())
