"""The ASGI service (``/mcp``) as uvicorn workers behind one process that deals out connections.

    python -m xmemo.serve --host 0.0.0.0 --port 8001 --workers 2 [--proxy-headers]

With ``uvicorn --workers N`` kept-alive connections stay split as they fell, and the busier
worker sets the latency tail (docs/benchmarks.md, *The serving path*). Here the first process
only accepts, handing each connection to the next worker in turn over a UNIX socket
(SCM_RIGHTS); dead workers are restarted, SIGTERM drains. Linux only. Private API: a uvicorn
``Server`` started with no sockets and what its startup leaves per listener
(``tests/infra/test_private_apis_servers.py``); ``XMEMO_SERVE_DEALER=0`` is uvicorn's own."""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import uvicorn

from skills_app.infra.multiproc import prepare as prepare_metrics_dir

APP = "xmemo.asgi:application"
LOG = logging.getLogger("xmemo.serve")
READY = b"ready"
# A worker that dies younger than this is started again only after the same pause, so a
# worker that cannot start (no database, a broken setting) does not spin the machine.
YOUNG_SECONDS = 1.0


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
    parser.add_argument("--worker-fd", type=int, help=argparse.SUPPRESS)
    return parser


# ---------------------------------------------------------------------------------- the worker


class _HandedServer(uvicorn.Server):
    """A uvicorn server with no listener of its own: it serves the connections that arrive on
    ``channel``, one descriptor per message."""

    def __init__(self, config: uvicorn.Config, channel: socket.socket) -> None:
        super().__init__(config)
        self.channel = channel

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=[])
        if self.should_exit or not self.started:
            return
        loop = asyncio.get_running_loop()
        # What uvicorn's own startup builds for each connection of a listener (typed there as
        # asyncio's base Protocol, hence uvicorn's own ignore).
        protocol = functools.partial(  # type: ignore[call-arg]
            self.config.http_protocol_class,
            config=self.config,
            server_state=self.server_state,
            app_state=self.lifespan.state,
        )
        self.channel.setblocking(False)
        loop.add_reader(self.channel.fileno(), self._take, loop, protocol)
        self.channel.send(READY)  # from now on the accepting process deals to this worker

    def _take(
        self, loop: asyncio.AbstractEventLoop, protocol: Callable[[], asyncio.Protocol]
    ) -> None:
        try:
            message, fds, _, _ = socket.recv_fds(self.channel, 16, 1)
        except BlockingIOError:
            return
        except OSError:
            message, fds = b"", []
        if not message and not fds:  # the accepting process is gone: stop, as on SIGTERM
            loop.remove_reader(self.channel.fileno())
            self.should_exit = True
            return
        for fd in fds:
            conn = socket.socket(fileno=fd)
            if self.should_exit:
                conn.close()
                continue
            conn.setblocking(False)
            task = loop.create_task(loop.connect_accepted_socket(protocol, conn))
            task.add_done_callback(_surface_failure)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        loop = asyncio.get_running_loop()
        loop.remove_reader(self.channel.fileno())
        self.channel.close()
        await super().shutdown(sockets=[])


def _surface_failure(task: asyncio.Task[object]) -> None:
    if not task.cancelled() and task.exception() is not None:
        LOG.warning("a handed connection could not be served: %r", task.exception())


def _config(args: argparse.Namespace) -> uvicorn.Config:
    return uvicorn.Config(
        APP,
        loop="uvloop",
        http="httptools",
        log_level=args.log_level,
        proxy_headers=args.proxy_headers,
        forwarded_allow_ips=args.forwarded_allow_ips,
    )


def _serve_handed(args: argparse.Namespace) -> None:
    channel = socket.socket(fileno=args.worker_fd)
    _HandedServer(_config(args), channel).run()


# ------------------------------------------------------------------------- the accepting process


@dataclass
class _Worker:
    process: subprocess.Popen[bytes]
    channel: socket.socket
    pidfd: int
    started: float = field(default_factory=time.monotonic)
    ready: bool = False


class _Dealer:
    """Accepts on ``listener`` and deals each connection to the next live worker in turn."""

    def __init__(self, args: argparse.Namespace, listener: socket.socket) -> None:
        self.args = args
        self.listener = listener
        self.workers: list[_Worker] = []
        self.turn = 0
        self.selector = selectors.DefaultSelector()
        self.stopping = False

    def _spawn(self) -> _Worker:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        command = [sys.executable, "-m", "xmemo.serve", *self._worker_args(theirs.fileno())]
        process = subprocess.Popen(command, pass_fds=[theirs.fileno()])
        theirs.close()
        ours.setblocking(False)
        worker = _Worker(process=process, channel=ours, pidfd=os.pidfd_open(process.pid))
        self.selector.register(worker.pidfd, selectors.EVENT_READ, ("exited", worker))
        self.selector.register(worker.channel, selectors.EVENT_READ, ("said", worker))
        return worker

    def _worker_args(self, fd: int) -> list[str]:
        args = ["--worker-fd", str(fd), "--log-level", self.args.log_level]
        if self.args.proxy_headers:
            args += ["--proxy-headers", "--forwarded-allow-ips", self.args.forwarded_allow_ips]
        return args

    def _deal(self, conn: socket.socket) -> None:
        # Answers go out at once, not after the client's delayed ACK (uvloop sets it too).
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # Only to workers that have started; until one has, the first ones queue them.
        workers = [worker for worker in self.workers if worker.ready] or self.workers
        for _ in range(len(workers)):
            worker = workers[self.turn % len(workers)]
            self.turn += 1
            try:
                socket.send_fds(worker.channel, [b"c"], [conn.fileno()])
                return
            except OSError:  # starting, busy or gone: the next one takes it
                continue
        LOG.warning("no worker could take a connection; it is closed")

    def _accept_all(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # e.g. EMFILE: let the backlog hold it a moment
                LOG.warning("accept failed: %s", exc)
                time.sleep(0.1)  # not a busy loop while the listener stays readable
                return
            with conn:
                self._deal(conn)

    def _heard(self, worker: _Worker) -> None:
        """A worker says one thing, that it has started; its exit is seen on its pidfd."""
        try:
            said = worker.channel.recv(16)
        except BlockingIOError:
            return
        except OSError:
            said = b""
        self.selector.unregister(worker.channel)
        worker.ready = said == READY

    def _replace(self, dead: _Worker) -> None:
        self.selector.unregister(dead.pidfd)
        if dead.channel.fileno() in self.selector.get_map():
            self.selector.unregister(dead.channel)
        os.close(dead.pidfd)
        dead.channel.close()
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
        self.listener.setblocking(False)
        self.selector.register(self.listener, selectors.EVENT_READ, ("listener", None))
        self.selector.register(wake_r, selectors.EVENT_READ, ("wake", None))
        self.workers = [self._spawn() for _ in range(self.args.workers)]
        LOG.info(
            "serving %s on http://%s:%d with %d workers",
            APP,
            self.args.host,
            self.listener.getsockname()[1],
            self.args.workers,
        )
        while self.workers:
            for key, _ in self.selector.select():
                event, worker = key.data
                if event == "listener" and not self.stopping:
                    self._accept_all()
                elif event == "wake":
                    wake_r.recv(64)
                elif event == "said":
                    self._heard(worker)
                elif event == "exited":
                    self._replace(worker)
            if self.stopping and self.listener.fileno() != -1:
                self.selector.unregister(self.listener)
                self.listener.close()
                for worker in self.workers:
                    worker.process.send_signal(signal.SIGTERM)
        return 0

    def _on_signal(self, signum: int, frame: object) -> None:
        self.stopping = True


def _dealing() -> bool:
    """``XMEMO_SERVE_DEALER`` (settings): off, uvicorn's own workers serve (``_serve_plain``)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "xmemo.settings")
    from django.conf import settings

    return bool(settings.XMEMO_SERVE_DEALER)


def _serve_plain(args: argparse.Namespace) -> int:
    """The fallback: ``uvicorn --workers N``, the same application, loop, parser and flags."""
    config = _config(args)
    uvicorn.run(
        APP,
        host=args.host,
        port=args.port,
        workers=args.workers,
        backlog=args.backlog,
        loop=config.loop,
        http=config.http,
        log_level=args.log_level,
        proxy_headers=args.proxy_headers,
        forwarded_allow_ips=args.forwarded_allow_ips,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.worker_fd is not None:
        _serve_handed(args)
        return 0
    logging.basicConfig(level=args.log_level.upper(), format="%(message)s")
    # The workers count into one fresh directory that /metrics adds up (infra/multiproc.py).
    prepare_metrics_dir()
    if not _dealing():
        return _serve_plain(args)
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    listener = socket.create_server(
        (args.host, args.port), family=family, backlog=args.backlog, reuse_port=False
    )
    return _Dealer(args, listener).run()


if __name__ == "__main__":
    sys.exit(main())
