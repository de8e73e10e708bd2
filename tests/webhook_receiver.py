"""A real HTTP server that receives webhooks in tests: it records every POST and answers
500 to the first ``fail_first`` requests of each path listed in ``flaky``."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.support import wait_until


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: str
    status: int


@dataclass
class Receiver:
    base_url: str
    flaky: dict[str, int] = field(default_factory=dict)
    redirect: set[str] = field(default_factory=set)
    requests: list[Received] = field(default_factory=list)
    _seen: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, path: str) -> int:
        with self._lock:
            self._seen[path] += 1
            if path in self.redirect:
                return 302
            return 500 if self._seen[path] <= self.flaky.get(path, 0) else 200

    def on(self, path: str) -> list[Received]:
        return [r for r in self.requests if r.path == path]

    def wait_for(self, done: Callable[[], bool], timeout: float = 60) -> None:
        wait_until(
            done,
            timeout,
            interval=0.1,
            message=lambda: f"receiver timed out; got {[r.path for r in self.requests]}",
        )


@contextmanager
def receiver(**options: object) -> Iterator[Receiver]:
    state: dict[str, Receiver] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0"))).decode()
            rec = state["r"]
            status = rec.answer(self.path)
            rec.requests.append(
                Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body, status)
            )
            self.send_response(status)
            if status == 302:
                self.send_header("Location", "http://127.0.0.1:9/elsewhere")
            self.end_headers()
            self.wfile.write(b"ok" if status == 200 else b"boom")

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state["r"] = Receiver(base_url=f"http://127.0.0.1:{server.server_address[1]}", **options)  # type: ignore[arg-type]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state["r"]
    finally:
        server.shutdown()
        server.server_close()
