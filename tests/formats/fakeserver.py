"""A local stand-in for GitHub and ClawHub: http.server on 127.0.0.1, a random port, a thread.

Routes map a request path (with its query) to a handler; every request is recorded so a test
can assert that a refused host received nothing at all.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Handler = Callable[[BaseHTTPRequestHandler], None]


@dataclass
class FakeServer:
    host: str  # "127.0.0.1:PORT"
    requests: list[tuple[str, str]] = field(default_factory=list)  # (path, Host header)

    def url(self, path: str) -> str:
        return f"http://{self.host}{path}"


def respond(status: int, body: bytes = b"", headers: Mapping[str, str] | None = None) -> Handler:
    def handle(request: BaseHTTPRequestHandler) -> None:
        request.send_response(status)
        all_headers = {"Content-Length": str(len(body)), **(headers or {})}
        for name, value in all_headers.items():
            request.send_header(name, value)
        request.end_headers()
        request.wfile.write(body)

    return handle


def commit_lookup(sha: str) -> Handler:
    """GitHub's ``GET /repos/OWNER/REPO/commits/REF``: the bare SHA for the ``sha`` media type,
    else (as GitHub does) a JSON commit object."""

    def handle(request: BaseHTTPRequestHandler) -> None:
        if request.headers.get("Accept") == "application/vnd.github.sha":
            respond(200, sha.encode())(request)
        else:
            respond(200, b'{"sha": "%s", "files": []}' % sha.encode())(request)

    return handle


def redirect(location: str, status: int = 302) -> Handler:
    return respond(status, headers={"Location": location})


def unsized(body: bytes) -> Handler:
    """No Content-Length: the body ends when the connection closes."""

    def handle(request: BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("Connection", "close")
        request.end_headers()
        request.wfile.write(body)
        request.close_connection = True

    return handle


def trickle(*, byte_every: float, seconds: float) -> Handler:
    """One byte every ``byte_every`` seconds; never finishes within a short timeout."""

    def handle(request: BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("Connection", "close")
        request.end_headers()
        request.close_connection = True
        deadline = time.monotonic() + seconds
        try:
            while time.monotonic() < deadline:
                request.wfile.write(b"x")
                request.wfile.flush()
                time.sleep(byte_every)
        except OSError:
            return  # the client gave up, as it should

    return handle


def stall(seconds: float) -> Handler:
    """Headers, then silence."""

    def handle(request: BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("Content-Length", "10")
        request.end_headers()
        request.wfile.flush()
        time.sleep(seconds)

    return handle


@contextmanager
def fake_server(routes: Mapping[str, Handler]) -> Iterator[FakeServer]:
    record: list[tuple[str, str]] = []

    class RequestHandler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            record.append((self.path, self.headers.get("Host", "")))
            handler = routes.get(self.path, respond(404, b"not found"))
            handler(self)

        def log_message(self, format: str, *args: object) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), RequestHandler)
    httpd.daemon_threads = True
    httpd.block_on_close = False
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield FakeServer(host=f"127.0.0.1:{httpd.server_address[1]}", requests=record)
    finally:
        httpd.shutdown()
        httpd.server_close()
