"""The bench's costs by the server's CPU per request (bench/cpu.py, bench/recall.py), and the
priming pass that warms every worker first (bench/loadgen.py)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bench import cpu, loadgen
from bench.recall import cost_ratios, cost_verdict

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc (Linux)")

BURN = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"


def test_a_tree_reading_counts_what_its_children_ran() -> None:
    # A parent that idles while its child burns 0.3 s of CPU, then idles too.
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import subprocess, sys, time\nsubprocess.run([sys.executable, '-c', {BURN!r}])\n"
            "time.sleep(30)",
        ]
    )
    try:
        time.sleep(0.05)
        before = cpu.read(parent.pid)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # wait for the child to be gone
            after = cpu.read(parent.pid)
            if len(after.pids) == 1 and len(before.pids) == 2:
                break
            if len(after.pids) == 2:
                before = after  # the child started after the first reading
            time.sleep(0.01)
        # The child came and went between the readings: what it ran is in neither sum.
        assert cpu.spent(before, after) is None
        again = cpu.read(parent.pid)
        used = cpu.spent(after, again)
        assert used is not None
        assert 0 <= used < 0.1  # the parent only sleeps
    finally:
        parent.kill()
        parent.wait()


def test_a_burning_process_is_charged_its_cpu_not_the_wall_clock() -> None:
    child = subprocess.Popen([sys.executable, "-c", BURN + "time.sleep(30)"])
    try:
        before = cpu.read(child.pid)
        time.sleep(2.0)
        used = cpu.spent(before, cpu.read(child.pid))
        assert used is not None
        assert 0.05 < used <= 0.6  # its 0.3 s, and its start-up if it was not done yet
    finally:
        child.kill()
        child.wait()
    with pytest.raises(ProcessLookupError):
        cpu.read(child.pid)


def _windows(*requests: int) -> list[loadgen.Result]:
    return [loadgen.Result("w", n, 1.0, 1.0, 1.0, 1.0, 0) for n in requests]


def test_cost_ratios_pair_the_windows_of_each_round_and_skip_the_unmeasured() -> None:
    # Rounds: 2 ms vs 1 ms per request; a round with a worker restarted; a round with nothing.
    ratios = cost_ratios(
        _windows(100, 100, 0), [0.2, None, 0.0], _windows(200, 100, 100), [0.2, 0.1, 0.1]
    )
    assert ratios == [2.0]


def test_the_verdict_is_the_median_so_one_noisy_round_does_not_decide_it() -> None:
    ok, line = cost_verdict("x", [1.01, 0.99, 1.02, 1.00, 1.60], 1.05, "detail")
    assert ok
    assert line.startswith("PASS  x: server CPU per request 1.010x, median of 5 rounds")
    assert "range 0.990-1.600" in line
    assert "target <= 1.05" in line
    ok, line = cost_verdict("x", [1.07, 1.08, 0.90, 1.09, 1.10], 1.05, "detail")
    assert not ok
    assert line.startswith("FAIL")
    ok, line = cost_verdict("x", [1.0, 1.0], 1.05, "detail")
    assert not ok
    assert "too few" in line


class _Counting(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: dict[str, int] = {}
    lock = threading.Lock()

    def do_GET(self) -> None:
        with self.lock:
            self.seen[self.path] = self.seen.get(self.path, 0) + 1
        status = 200 if self.path != "/missing" else 404
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def counting_server() -> Iterator[str]:
    _Counting.seen = {}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_priming_sends_every_request_the_times_asked_and_counts_failures(
    counting_server: str,
) -> None:
    requests = loadgen.Requests(paths=("/a", "/b", "/missing"))
    failed = loadgen.prime(counting_server, requests, times=6, connections=4)
    assert _Counting.seen == {"/a": 6, "/b": 6, "/missing": 6}
    assert failed == 6


def _p99(*p99s: float) -> list[loadgen.Result]:
    return [loadgen.Result("w", 7000, 2.0, 4.0, 5.0, p99, 0) for p99 in p99s]


def test_the_tail_is_judged_round_by_round_beside_the_bare_views_window() -> None:
    """A hiccup of the machine in one round's Level 1 window does not decide the tail; a tail
    longer than the bare view's in most rounds does."""
    from bench.recall import tail_verdict

    level1, bare = _p99(7.0, 7.2, 19.0, 6.9), _p99(6.5, 6.4, 6.6, 6.3)
    pooled_level1, pooled_bare = _p99(9.1, 6.5)  # what one slow window does to the pooled p99
    ok, line = tail_verdict(level1, bare, (pooled_level1, pooled_bare), 1.2)
    assert ok
    assert line.startswith("PASS  Level 1 tail: p99 ")
    assert "median of 4 rounds 1.11x" in line
    assert "range 1.08-2.88" in line
    assert "pooled 9.10 vs 6.50 ms, 1.40x" in line
    level1 = _p99(8.0, 8.1, 7.9, 8.2)
    ok, line = tail_verdict(level1, bare, (pooled_level1, pooled_bare), 1.2)
    assert not ok
    assert line.startswith("FAIL")
    ok, line = tail_verdict(level1[:1], bare[:1], (pooled_level1, pooled_bare), 1.2)
    assert not ok
    assert "too few" in line
