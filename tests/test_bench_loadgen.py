"""The bench's load generator pools interleaved windows exactly (bench/loadgen.py)."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bench import loadgen
from tests.support import require_service


def _window(name: str, latencies_us: list[int], seconds: float) -> loadgen.Result:
    counts: dict[int, int] = {}
    for value in latencies_us:
        counts[value] = counts.get(value, 0) + 1
    return loadgen._from_histogram(name, counts, len(latencies_us), seconds, errors=0)


def _nearest_rank(values: list[int], p: float) -> float:
    ordered = sorted(values)
    return ordered[round(p / 100 * len(ordered) + 0.5) - 1] / 1000


def test_pooled_windows_have_the_percentiles_of_all_their_latencies_together() -> None:
    rng = random.Random(7)
    quiet = [rng.randint(2_000, 4_000) for _ in range(900)]
    noisy = [rng.randint(3_000, 20_000) for _ in range(100)]  # one window on a busy moment
    pooled = loadgen.merge("pooled", [_window("a", quiet, 2.0), _window("b", noisy, 2.0)])
    everything = quiet + noisy
    assert pooled.requests == 1000
    assert pooled.seconds == 4.0
    assert pooled.rps == 250
    for p, figure in ((50, pooled.p50_ms), (95, pooled.p95_ms), (99, pooled.p99_ms)):
        assert figure == _nearest_rank(everything, p), p


def test_a_window_without_its_latencies_cannot_be_pooled() -> None:
    bare = loadgen.Result("old", 10, 1.0, 1.0, 2.0, 3.0, 0)
    with pytest.raises(ValueError, match="no latency histogram"):
        loadgen.merge("pooled", [bare])


class _Ok(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def local_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_every_measured_request_is_in_the_histogram(local_server: str) -> None:
    requests = loadgen.Requests(paths=("/a", "/b"))
    windows = [
        loadgen.run("w", local_server, requests, seconds=0.3, connections=2, tool="python")
        for _ in range(2)
    ]
    for window in windows:
        assert window.requests > 0
        assert sum(count for _, count in window.histogram) == window.requests
        assert window.p50_ms <= window.p95_ms <= window.p99_ms
    pooled = loadgen.merge("w", windows)
    assert pooled.requests == sum(w.requests for w in windows)
    assert pooled.errors == 0


class _Recording(_Ok):
    seen: list[str] = []

    def do_GET(self) -> None:
        self.seen.append(self.path)
        super().do_GET()


@pytest.mark.parametrize("tool", ["python", "wrk"])
def test_each_window_goes_on_where_the_last_one_of_its_list_stopped(tool: str) -> None:
    """A measured window must not re-send what its warm-up just sent: Level 0's per-process
    cache of query embeddings would answer them. wrk seeds Lua's random numbers alike in every
    run, so each window had started at the same query."""
    if tool == "wrk":
        require_service("wrk", loadgen.have_wrk(), "apt-get install wrk")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recording)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    requests = loadgen.Requests(paths=tuple(f"/{tool}/{i}" for i in range(100_000)))
    try:
        sent = []
        for _ in range(2):
            _Recording.seen = []
            loadgen.run("w", base, requests, seconds=1.0, connections=2, tool=tool)
            sent.append(set(_Recording.seen))
    finally:
        server.shutdown()
        server.server_close()
    assert min(len(sent[0]), len(sent[1])) > 10
    assert not sent[0] & sent[1]
