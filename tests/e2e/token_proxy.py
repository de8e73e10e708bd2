"""A loopback reverse proxy that adds a bearer token, as a host's own configuration would.

The MCP conformance suite connects without credentials, and the product has no way around
authentication; so the test puts this in front, the way ``docker/nginx.conf`` fronts the
services: ``/mcp`` to the MCP service, everything else to the web service. Every request
header (Host and Origin included, which the DNS-rebinding checks read) goes through as sent,
plus ``Authorization``; answers come back as they are, streamed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

# Connection-level headers a proxy does not forward (RFC 9110 §7.6.1).
HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "content-length",
}


@contextmanager
def token_proxy(*, mcp: str, web: str, secret: str) -> Iterator[str]:
    """Serve the proxy on a free loopback port; yields its base URL."""
    client = httpx.Client(timeout=120)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            upstream = mcp if self.path.split("?")[0].rstrip("/") == "/mcp" else web
            # Optional whitespace around a value is not part of it (RFC 9110 §5.5), as nginx
            # reads it too.
            headers = [
                (name, value.strip())
                for name, value in self.headers.items()
                if name.lower() not in HOP_BY_HOP and name.lower() != "authorization"
            ]
            headers.append(("Authorization", f"Bearer {secret}"))
            request = client.build_request(
                self.command, upstream + self.path, headers=headers, content=body
            )
            response = client.send(request, stream=True)
            try:
                self.send_response(response.status_code)
                for name, value in response.headers.multi_items():
                    if name.lower() not in HOP_BY_HOP:
                        self.send_header(name, value)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for chunk in response.iter_raw():
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            finally:
                response.close()

        do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_OPTIONS = _forward

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        client.close()
