"""Load generation on loopback: ``wrk`` when installed (C, cheap on a 2-core box), else a small
threaded keep-alive client. Both are bounded in time and send only to 127.0.0.1."""

from __future__ import annotations

import http.client
import json
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field, fields
from pathlib import Path

WRK_SCRIPT = r"""
-- GET: each line of BENCH_PATHS is a path. POST: each line is a body, sent to BENCH_TARGET.
local lines = {}
for line in io.lines(os.getenv("BENCH_PATHS")) do lines[#lines + 1] = line end
local method = os.getenv("BENCH_METHOD")
local target = os.getenv("BENCH_TARGET")
local headers = {}
for line in io.lines(os.getenv("BENCH_HEADERS")) do
  local name, value = line:match("^([^:]+): (.*)$")
  if name then headers[name] = value end
end
-- BENCH_START: the line the last window of these lines stopped at (run()).
local counter = tonumber(os.getenv("BENCH_START")) - 1

function request()
  counter = counter + 1
  local line = lines[(counter % #lines) + 1]
  if method == "POST" then
    return wrk.format("POST", target, headers, line)
  end
  return wrk.format("GET", line, headers)
end

function done(summary, latency, requests)
  io.write(string.format(
    'BENCH_JSON {"requests": %d, "duration_us": %d, "p50_us": %d, "p95_us": %d, '
    .. '"p99_us": %d, "errors": %d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(95),
    latency:percentile(99),
    summary.errors.connect + summary.errors.read + summary.errors.write
      + summary.errors.status + summary.errors.timeout))
  -- Every distinct latency with its count, so that windows can be pooled exactly (merge()).
  local pairs = {}
  for i = 1, #latency do
    local value, count = latency(i)
    pairs[#pairs + 1] = string.format("%d:%d", value, count)
  end
  io.write("BENCH_HIST " .. table.concat(pairs, " ") .. "\n")
end
"""


@dataclass(frozen=True)
class Result:
    name: str
    requests: int
    seconds: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    errors: int
    # (latency in µs, how many requests took it), ascending: what merge() pools.
    histogram: tuple[tuple[int, int], ...] = field(default=(), repr=False, compare=False)

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def summary(self) -> dict[str, object]:
        """The figures, without the histogram."""
        figures = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "histogram"}
        return {**figures, "rps": self.rps}


def _percentile_us(histogram: list[tuple[int, int]], total: int, p: float) -> int:
    """wrk's rule: the smallest latency at or below which round(p% of total + 0.5) fall."""
    rank = round(p / 100 * total + 0.5)
    seen = 0
    for value, count in histogram:
        seen += count
        if seen >= rank:
            return value
    return histogram[-1][0] if histogram else 0


def _from_histogram(
    name: str, counts: dict[int, int], requests: int, seconds: float, errors: int
) -> Result:
    histogram = sorted(counts.items())
    total = sum(counts.values())
    p50, p95, p99 = (_percentile_us(histogram, total, p) / 1000 for p in (50, 95, 99))
    return Result(name, requests, seconds, p50, p95, p99, errors, tuple(histogram))


def merge(name: str, windows: list[Result]) -> Result:
    """Windows of one scenario pooled as if they were one: requests and seconds add up, and
    the percentiles are those of every latency of every window together. (wrk's request count
    can differ from its latency count by the odd request timed out or cut off at the end.)"""
    counts: dict[int, int] = {}
    for window in windows:
        if window.requests and not window.histogram:
            raise ValueError(f"{window.name}: no latency histogram to pool")
        for value, count in window.histogram:
            counts[value] = counts.get(value, 0) + count
    return _from_histogram(
        name,
        counts,
        sum(w.requests for w in windows),
        sum(w.seconds for w in windows),
        sum(w.errors for w in windows),
    )


def have_wrk() -> bool:
    return shutil.which("wrk") is not None


@dataclass(frozen=True)
class Requests:
    """What a scenario sends, round robin: GETs of ``paths``, or POSTs of ``bodies`` (one JSON
    document each) to ``target``; with ``headers`` on every request."""

    paths: tuple[str, ...] = ()
    target: str = ""
    bodies: tuple[str, ...] = ()
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def method(self) -> str:
        return "POST" if self.bodies else "GET"

    def with_auth(self, auth: str | None) -> Requests:
        extra = (("Authorization", auth),) if auth else ()
        return Requests(self.paths, self.target, self.bodies, (*self.headers, *extra))


# Where the next window of each list of lines starts: where the last one stopped. A measured
# window then never re-sends what its warm-up just sent (Level 0's per-process cache of query
# embeddings would answer those); until 2026-12-05 every window began at the same line.
_next_start: dict[tuple[str, ...], int] = {}


def run(
    name: str,
    base_url: str,
    requests: Requests,
    *,
    seconds: float,
    connections: int,
    tool: str,
) -> Result:
    assert base_url.startswith("http://127.0.0.1:"), "loopback only"
    lines = requests.bodies or requests.paths
    start = _next_start.get(lines, 0)
    send = _run_wrk if tool == "wrk" else _run_threads
    result = send(name, base_url, requests, seconds=seconds, connections=connections, start=start)
    # Each connection may have had one more request on its way when the window closed.
    _next_start[lines] = (start + result.requests + connections) % len(lines)
    return result


def _run_wrk(
    name: str,
    base_url: str,
    requests: Requests,
    *,
    seconds: float,
    connections: int,
    start: int,
) -> Result:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "bench.lua"
        script.write_text(WRK_SCRIPT)
        lines = Path(tmp) / "lines.txt"
        lines.write_text("\n".join(requests.bodies or requests.paths) + "\n")
        headers = Path(tmp) / "headers.txt"
        headers.write_text("".join(f"{key}: {value}\n" for key, value in requests.headers))
        env = {
            "BENCH_PATHS": str(lines),
            "BENCH_METHOD": requests.method,
            "BENCH_TARGET": requests.target,
            "BENCH_HEADERS": str(headers),
            "BENCH_START": str(start),
            "PATH": "/usr/bin:/bin",
        }
        command = [
            "wrk",
            "-t1",
            f"-c{connections}",
            f"-d{max(1, round(seconds))}s",
            "--timeout",
            "5s",
            "-s",
            str(script),
            base_url,
        ]
        completed = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=seconds + 30, check=True
        )
    line = next(
        (line for line in completed.stdout.splitlines() if line.startswith("BENCH_JSON ")), None
    )
    if line is None:
        raise RuntimeError(f"wrk printed no summary:\n{completed.stdout}\n{completed.stderr}")
    data = json.loads(line.removeprefix("BENCH_JSON "))
    hist = next(line for line in completed.stdout.splitlines() if line.startswith("BENCH_HIST"))
    histogram = tuple(
        (int(value), int(count)) for value, count in (pair.split(":") for pair in hist.split()[1:])
    )
    return Result(
        name=name,
        requests=data["requests"],
        seconds=data["duration_us"] / 1e6,
        p50_ms=data["p50_us"] / 1000,
        p95_ms=data["p95_us"] / 1000,
        p99_ms=data["p99_us"] / 1000,
        errors=data["errors"],
        histogram=histogram,
    )


def _run_threads(
    name: str,
    base_url: str,
    requests: Requests,
    *,
    seconds: float,
    connections: int,
    start: int,
) -> Result:
    host, port = base_url.removeprefix("http://").split(":")
    deadline = time.perf_counter() + seconds
    latencies: list[list[float]] = [[] for _ in range(connections)]
    errors = [0] * connections
    headers = dict(requests.headers)
    lines = requests.bodies or requests.paths

    def worker(slot: int) -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=5)
        i = start + slot
        while time.perf_counter() < deadline:
            line = lines[i % len(lines)]
            i += connections
            sent_at = time.perf_counter()
            try:
                if requests.bodies:
                    conn.request("POST", requests.target, body=line, headers=headers)
                else:
                    conn.request("GET", line, headers=headers)
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    errors[slot] += 1
                if response.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = http.client.HTTPConnection(host, int(port), timeout=5)
            except (OSError, http.client.HTTPException):
                errors[slot] += 1
                conn.close()
                conn = http.client.HTTPConnection(host, int(port), timeout=5)
            latencies[slot].append(time.perf_counter() - sent_at)
        conn.close()

    started = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(slot,)) for slot in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    counts: dict[int, int] = {}
    for per in latencies:
        for sample in per:
            micros = round(sample * 1e6)
            counts[micros] = counts.get(micros, 0) + 1
    return _from_histogram(name, counts, sum(counts.values()), elapsed, sum(errors))


def prime(base_url: str, requests: Requests, *, times: int, connections: int) -> int:
    """Every request of ``requests`` sent ``times`` times, ``connections`` at once: enough for
    each worker of the server to have served each one (gunicorn's sync workers take a new
    connection per request, whichever worker accepts first), so their caches are warm before
    anything is measured, however slowly the machine runs. Answers how many were not 200."""
    assert base_url.startswith("http://127.0.0.1:"), "loopback only"
    host, port = base_url.removeprefix("http://").split(":")
    lines = requests.bodies or requests.paths
    pending = iter([line for _ in range(times) for line in lines])
    lock = threading.Lock()
    failed = [0]

    def worker() -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        while True:
            with lock:
                line = next(pending, None)
            if line is None:
                break
            if requests.bodies:
                conn.request("POST", requests.target, body=line, headers=dict(requests.headers))
            else:
                conn.request("GET", line, headers=dict(requests.headers))
            response = conn.getresponse()
            response.read()
            if response.status != 200:
                with lock:
                    failed[0] += 1
            if response.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = http.client.HTTPConnection(host, int(port), timeout=30)
        conn.close()

    threads = [threading.Thread(target=worker) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failed[0]
