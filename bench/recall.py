"""Recall benchmark: Level 0, 1 and 2 through the real HTTP stack, beside a bare Django view.

    make bench                 # N=10,000 skills (3 revisions x 4 components each)
    make bench N=2000          # a quicker run
    python -m bench --level0-scale 100000   # also Level 0 at 100,000 skills
    python -m bench --level0-only --n 100000  # the bare view and Level 0 only

Seeds PostgreSQL, serves it with gunicorn and the MCP service on loopback, drives each scenario
in interleaved rounds and prints throughput, latency, the ratios to the bare view and the
targets. The method, step by step, and the figures: docs/benchmarks.md."""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from bench import cpu, loadgen

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/xmemo_bench"
RESULTS = ROOT / "bench" / "results"
API_LEVEL1 = "Level 1 root"
OAUTH_LEVEL1 = "Level 1 root (OAuth)"
OAUTH_MAX_RATIO = 1.10
# Level 1 on a server that counts no usage (XMEMO_USAGE=0) beside the one that does: counting
# (docs/contract.md §19) may cost at most 5 % of throughput.
UNCOUNTED_LEVEL1 = "Level 1 root (usage off)"
COUNTED_LEVEL1 = "Level 1 root (usage on)"
USAGE_MAX_RATIO = 1.05
# Level 1 of skills with labels, by slug and by ``label=``, beside the same on skills without
# (docs/contract.md §18): labels may cost at most 5 % of the server's CPU per request.
UNLABELLED_LEVEL1 = "Level 1 root (no labels)"
LABELLED_LEVEL1 = "Level 1 root (3 labels)"
BY_LABEL_LEVEL1 = "Level 1 by label="
LABELS_MAX_RATIO = 1.05
# A compared scenario: its label, its requests' key, the Authorization header (None: the bench
# token's) and the server ("": gunicorn).
Scenario = tuple[str, str, str | None, str]
LEVEL0_P95_MS = 20.0
# Issue 42 #8, every production feature on: Level 1 over REST at 85 % of the bare view's
# throughput with a p99 at most 1.2 times its; over MCP 1.5 times REST's, p99 within 10 ms.
LEVEL1_MIN_SHARE = 0.85
LEVEL1_TAIL_RATIO = 1.2
MCP_MIN_SHARE = 1.5
MCP_P99_MS = 10.0
# The private-API fast paths of the MCP door against their public fallbacks (docs/operations.md):
# each is kept where it gains at least 15 % on its path.
FAST_PATH_MIN_GAIN = 0.15
MCP_SDK_DISPATCH = "MCP Level 1, SDK dispatch (fast path off)"
INDEX_WARMUP_SECONDS = 15.0
MCP_WARMUP_SECONDS = 6.0
WINDOW_PAUSE_SECONDS = 1.0
WINDOW_WARMUP_SECONDS = 1.0
SHORT = "common words"
SEQUENTIAL = "one client, sequential"
MCP_LEVEL1 = ("MCP Level 1 (2026-07-28)", "MCP Level 1 (handshake era)")


def _env(db_url: str, redis_url: str | None) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key in ("PATH", "HOME", "LANG", "LC_ALL", "PYTHONPATH", "TMPDIR")
    }
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "bench.settings",
            "DATABASE_URL": db_url,
            "SECRET_KEY": "bench-only-secret-key",
            "XMEMO_DEBUG": "0",
            "XMEMO_SECURE_COOKIES": "0",
            "XMEMO_RATE_LIMIT": "100000000/min",
            # The person's and the workspace's limits too (all the bench's tokens are one
            # person's, in one workspace): at their defaults most answers were 429s.
            "XMEMO_RATE_LIMIT_USER": "100000000/min",
            "XMEMO_RATE_LIMIT_WORKSPACE": "100000000/min",
            "XMEMO_LOG_LEVEL": "ERROR",
            "XMEMO_CACHE_PREFIX": "xmemo-bench",
            # Every production feature on: a JSON line per request, into a file (_started).
            "XMEMO_REQUEST_LOG": "1",
        }
    )
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


def _redis_url() -> str | None:
    if os.environ.get("BENCH_REDIS_URL"):
        return os.environ["BENCH_REDIS_URL"]
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            if sock.recv(16).startswith(b"+PONG"):
                return "redis://127.0.0.1:6379/5"
    except OSError:
        pass
    return None


def _ensure_database(db_url: str) -> None:
    import psycopg

    parsed = urllib.parse.urlparse(db_url)
    name = parsed.path.lstrip("/")
    admin = parsed._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')


def _django(env: dict[str, str]) -> None:
    os.environ.update(env)
    import django

    django.setup()


def _analyze() -> None:
    """The database as months of saves with autovacuum would leave it, after minutes of bulk
    loading: planner statistics, and the search vocabulary compacted (every skill saved
    rewrites the count rows of its words, migration 0014; loading 100,000 at once leaves
    millions of dead versions that autovacuum would have cleared along the way)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM FULL skills_app_searchterm")
        cursor.execute("VACUUM ANALYZE")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_server(
    env: dict[str, str], workers: int, app: str = "bench.wsgi:application"
) -> tuple[subprocess.Popen[bytes], str]:
    """gunicorn, sync workers (production's, gunicorn.conf.py): the REST service."""
    port = _free_port()
    command = [
        str(Path(sys.executable).parent / "gunicorn"),
        app,
        "--workers",
        str(workers),
        "--worker-class",
        "xmemo.gunicorn_worker.UsageSyncWorker",
        "--bind",
        f"127.0.0.1:{port}",
        "--log-level",
        "warning",
    ]
    return _started(command, env, port, "gunicorn")


def _start_mcp_server(env: dict[str, str], workers: int) -> tuple[subprocess.Popen[bytes], str]:
    """The MCP service as `make serve-mcp` and docker/compose.yml run it (xmemo/serve.py)."""
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "xmemo.serve",
        "--workers",
        str(workers),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]
    return _started(command, env, port, "the MCP service")


def _started(
    command: list[str], env: dict[str, str], port: int, name: str
) -> tuple[subprocess.Popen[bytes], str]:
    # The servers' standard error (a JSON line per request) into a file, as a container's log
    # takes it, not onto the terminal.
    log = tempfile.TemporaryFile()  # noqa: SIM115 - the child holds it open while it runs
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, start_new_session=True, stderr=log, stdout=log
    )
    log.close()
    base = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            with urllib.request.urlopen(f"{base}/bench/bare", timeout=1) as response:
                if response.status == 200:
                    return process, base
        except OSError:
            time.sleep(0.1)
    _stop(process)
    raise RuntimeError(f"{name} did not start")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def _paths(sample: int) -> dict[str, loadgen.Requests]:
    """Requests per scenario, over a random sample of the seeded skills."""
    from bench.seed import LABELS, TEAM_SLUG, labelled
    from skills_app.models import Skill, SkillComponent

    rng = random.Random(1)
    rows = list(
        Skill.objects.filter(workspace__slug=TEAM_SLUG, published_revision__isnull=False)
        .order_by("?")
        .values_list("slug", "published_revision_id", "published_revision__revision_id")[
            : 4 * sample
        ]
    )
    # Everything but the labels' own scenarios requests the unlabelled half (seed.seed_labels).
    unlabelled = [row for row in rows if not labelled(row[0])]
    skills = unlabelled[:sample]
    with_labels = [slug for slug, _, _ in rows if labelled(slug)][:sample]
    # The costs compared by CPU (usage counting off and on, labels or none) get skills of their
    # own, each set as often requested as the one it is compared with: a set that other
    # scenarios request too is warmer in the workers' caches, and looked cheaper.
    for_usage = [slug for slug, _, _ in unlabelled[sample : 2 * sample]] or [
        s for s, _, _ in skills
    ]
    for_labels = [slug for slug, _, _ in unlabelled[2 * sample : 3 * sample]] or for_usage
    components = dict(
        SkillComponent.objects.filter(
            revision_id__in=[pk for _, pk, _ in skills], type="reference"
        ).values_list("revision_id", "logical_path")
    )
    level1 = [f"/v1/recall?slug={slug}" for slug, _, _ in skills]
    level2 = [
        "/v1/recall?"
        + urllib.parse.urlencode(
            {"slug": slug, "revision_id": revision_id, "resource": components[pk]}
        )
        for slug, pk, revision_id in skills
        if pk in components
    ]
    # Distinct queries, so that each search runs the embedding model (repeated queries are
    # answered from a per-process cache of query vectors).
    level0 = _searches(level0_queries(rng))
    short = _searches(short_queries(rng))
    slugs = [slug for slug, _, _ in skills]
    return {
        "bare": loadgen.Requests(paths=("/bench/bare",)),
        "level0": loadgen.Requests(paths=tuple(level0)),
        "level0-short": loadgen.Requests(paths=tuple(short)),
        "level1": loadgen.Requests(paths=tuple(level1)),
        "level1-usage": loadgen.Requests(
            paths=tuple(f"/v1/recall?slug={slug}" for slug in for_usage)
        ),
        "level1-unlabelled": loadgen.Requests(
            paths=tuple(f"/v1/recall?slug={slug}" for slug in for_labels)
        ),
        "level1-labelled": loadgen.Requests(
            paths=tuple(f"/v1/recall?slug={slug}" for slug in with_labels)
        ),
        "level1-label": loadgen.Requests(
            paths=tuple(f"/v1/recall?slug={slug}&label={LABELS[1]}" for slug in with_labels)
        ),
        "level2": loadgen.Requests(paths=tuple(level2)),
        MCP_LEVEL1[0]: _mcp_recalls(slugs, modern=True),
        MCP_LEVEL1[1]: _mcp_recalls(slugs, modern=False),
    }


def _mcp_recalls(slugs: list[str], *, modern: bool) -> loadgen.Requests:
    """``recall_cloud_skill {slug}`` as an MCP client sends it over streamable HTTP: in the
    per-request era (the SDK client's default: version, capabilities and routing headers on
    every request), or in the handshake era, which a stateless server answers without a
    session."""
    from mcp_types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY
    from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_MODERN_VERSION

    version = LATEST_MODERN_VERSION if modern else LATEST_HANDSHAKE_VERSION
    headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", version),
    ]
    meta = {PROTOCOL_VERSION_META_KEY: version, CLIENT_CAPABILITIES_META_KEY: {}}
    if modern:
        headers += [("Mcp-Method", "tools/call"), ("Mcp-Name", "recall_cloud_skill")]
    bodies = tuple(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": index,
                "method": "tools/call",
                "params": {
                    "name": "recall_cloud_skill",
                    "arguments": {"slug": slug},
                    **({"_meta": meta} if modern else {}),
                },
            }
        )
        for index, slug in enumerate(slugs)
    )
    return loadgen.Requests(target="/mcp", bodies=bodies, headers=tuple(headers))


def _searches(queries: list[str]) -> list[str]:
    """Level 0 requests, top 10, one per query."""
    return [
        "/v1/recall?" + urllib.parse.urlencode({"query": query, "limit": "10"}) for query in queries
    ]


def short_queries(rng: random.Random) -> list[str]:
    """One or two of the bench's topic words, each held by thousands of skills: the searches
    whose candidates a word index must find among the most matches."""
    from bench.seed import TOPIC_WORDS

    queries = [*TOPIC_WORDS, *(f"{a} {b}" for a in TOPIC_WORDS for b in TOPIC_WORDS if a != b)]
    rng.shuffle(queries)
    return queries


def level0_queries(rng: random.Random, count: int = 20_000) -> list[str]:
    from bench.seed import TOPIC_WORDS, VOCABULARY

    queries = {
        f"{rng.choice(TOPIC_WORDS)} {rng.choice(VOCABULARY)} {rng.choice(VOCABULARY)}"
        for _ in range(count)
    }
    return sorted(queries)


def _embedding_time(rng: random.Random) -> tuple[float, float]:
    """p50 and p95 in ms of the query embedding alone, in this process, on distinct queries."""
    from skills_app.encoder import embedding

    model = embedding.query_encoder()
    if model is None:
        return float("nan"), float("nan")
    times = encode_times(model, level0_queries(rng, 300))
    return times[len(times) // 2], times[int(len(times) * 0.95)]


def encode_times(model: Any, queries: list[str], warm: int = 5) -> list[float]:
    """ms to encode each query alone, one after another, sorted (after ``warm`` warm-up ones)."""
    model.encode(queries[:warm])  # load and warm
    times = []
    for query in queries:
        started = time.perf_counter()
        model.encode([query])
        times.append((time.perf_counter() - started) * 1000)
    return sorted(times)


def _model_name() -> str:
    from skills_app.encoder import embedding

    return f"{embedding.MODEL} in {embedding.model_version()}, int8 products"


def _check(base: str, requests: loadgen.Requests, auth: str) -> None:
    """The scenario's first request answers 200 with a recall (REST, or an MCP tool result)."""
    headers = dict(requests.with_auth(auth).headers)
    if requests.bodies:
        data = requests.bodies[0].encode()
        request = urllib.request.Request(base + requests.target, data=data, headers=headers)
    else:
        request = urllib.request.Request(base + requests.paths[0], headers=headers)
    # Generous: the first search of a process builds its vector index (docs/search.md).
    with urllib.request.urlopen(request, timeout=120) as response:
        body = json.loads(response.read())
        assert response.status == 200, body
    if requests.bodies:
        assert body["result"]["isError"] is False, body
        body = body["result"]["structuredContent"]
    assert "kind" in body, body


def _table(results: list[loadgen.Result], bare: loadgen.Result, cpu_ms: dict[str, float]) -> str:
    """The figures, with the server's CPU per request where it was measured."""
    lines = [
        f"{'scenario':<40}{'req/s':>10}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'errors':>8}"
        f"{'vs bare':>9}{'CPU ms/req':>12}"
    ]
    for r in results:
        ratio = r.rps / bare.rps if bare.rps else 0.0
        spent = f"{cpu_ms[r.name]:>12.3f}" if r.name in cpu_ms else ""
        lines.append(
            f"{r.name:<40}{r.rps:>10,.0f}{r.p50_ms:>9.2f}{r.p95_ms:>9.2f}{r.p99_ms:>9.2f}"
            f"{r.errors:>8}{ratio:>8.0%} {spent}"
        )
    return "\n".join(lines)


def _cpu_ms(windows: list[loadgen.Result], spent: list[float | None]) -> float:
    """The server's CPU milliseconds per request over the windows it was read for."""
    measured = [(w, s) for w, s in zip(windows, spent, strict=True) if s is not None]
    requests = sum(w.requests for w, _ in measured)
    return 1000 * sum(s for _, s in measured) / requests if requests else float("nan")


def fast_path_verdict(what: str, fast: loadgen.Result, fallback: loadgen.Result) -> str:
    """KEEP where the fast path gains ``FAST_PATH_MIN_GAIN`` on its fallback in throughput or
    takes as much off its p99 (the tail is a path's cost too), else DROP."""
    gain = fast.rps / fallback.rps - 1 if fallback.rps else float("inf")
    tail = 1 - fast.p99_ms / fallback.p99_ms if fallback.p99_ms else 0.0
    ok = max(gain, tail) >= FAST_PATH_MIN_GAIN
    return (
        f"{'KEEP' if ok else 'DROP'}  fast path {what}: {fast.rps:,.0f} vs {fallback.rps:,.0f} "
        f"calls/s on its fallback, gain {gain:+.0%}; p99 {fast.p99_ms:.2f} vs "
        f"{fallback.p99_ms:.2f} ms, {tail:.0%} off (keep at >= {FAST_PATH_MIN_GAIN:.0%} of either)"
    )


def cost_ratios(
    windows: list[loadgen.Result],
    spent: list[float | None],
    reference: list[loadgen.Result],
    reference_spent: list[float | None],
) -> list[float]:
    """Per round, the server's CPU per request in ``windows`` over that in ``reference``
    (windows of the same round side by side; a round where either served nothing, or a
    worker came or went, is left out)."""
    return [
        (cpu_s / w.requests) / (ref_cpu / ref.requests)
        for w, cpu_s, ref, ref_cpu in zip(windows, spent, reference, reference_spent, strict=True)
        if w.requests and ref.requests and cpu_s is not None and ref_cpu
    ]


def cost_verdict(title: str, ratios: list[float], target: float, detail: str) -> tuple[bool, str]:
    """PASS when the median of the per-round ratios is at most ``target``; the quartiles and
    the range say how far the rounds spread."""
    if len(ratios) < 4:
        return False, f"FAIL  {title}: {len(ratios)} rounds measured, too few for a median"
    median = statistics.median(ratios)
    low, _, high = statistics.quantiles(ratios, n=4)
    ok = median <= target
    return ok, (
        f"{'PASS' if ok else 'FAIL'}  {title}: server CPU per request {median:.3f}x, median of "
        f"{len(ratios)} rounds (quartiles {low:.3f}-{high:.3f}, range {min(ratios):.3f}-"
        f"{max(ratios):.3f}; target <= {target:.2f}); {detail}"
    )


def tail_verdict(
    level1: list[loadgen.Result],
    bare: list[loadgen.Result],
    pooled: tuple[loadgen.Result, loadgen.Result],
    target: float,
) -> tuple[bool, str]:
    """PASS when the median over rounds of Level 1's p99 over the bare view's in the same round
    is at most ``target``: the two windows of a round are neighbours in time, so a hiccup of
    the machine lands in one ratio, not in the verdict. ``pooled`` (Level 1, bare) is printed."""
    ratios = [mine.p99_ms / theirs.p99_ms for mine, theirs in zip(level1, bare, strict=True)]
    pooled_level1, pooled_bare = pooled
    figures = (
        f"pooled {pooled_level1.p99_ms:.2f} vs {pooled_bare.p99_ms:.2f} ms, "
        f"{pooled_level1.p99_ms / pooled_bare.p99_ms:.2f}x"
    )
    if len(ratios) < 3:
        return False, f"FAIL  Level 1 tail: {len(ratios)} rounds measured, too few ({figures})"
    median = statistics.median(ratios)
    ok = median <= target
    return ok, (
        f"{'PASS' if ok else 'FAIL'}  Level 1 tail: p99 over the bare view's in the same round, "
        f"median of {len(ratios)} rounds {median:.2f}x (range {min(ratios):.2f}-"
        f"{max(ratios):.2f}; target <= {target}x); {figures}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=int(os.environ.get("N", "10000")))
    parser.add_argument("--level0-scale", type=int, default=int(os.environ.get("LEVEL0_N", "0")))
    parser.add_argument(
        "--seconds", type=float, default=float(os.environ.get("SECONDS_EACH", "10"))
    )
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sample", type=int, default=1000, help="distinct skills requested")
    parser.add_argument("--warmup", type=float, default=4.0, help="seconds before measuring")
    parser.add_argument(
        "--rounds",
        type=int,
        default=5,
        help="interleaved rounds the compared scenarios' seconds are split into",
    )
    parser.add_argument(
        "--cost-rounds",
        type=int,
        default=20,
        help="rounds of the costs compared by the server's CPU per request (labels, usage)",
    )
    parser.add_argument(
        "--cost-seconds", type=float, default=2.0, help="seconds of each of those windows"
    )
    parser.add_argument(
        "--level0-connections",
        type=int,
        default=0,
        help="connections for Level 0 (default: one per worker, so latency is the search's "
        "own, not queueing behind 16 connections)",
    )
    parser.add_argument(
        "--level0-only",
        action="store_true",
        help="measure the bare view and Level 0 only (concurrent and one sequential client), "
        "not Level 1, Level 2 nor the MCP door",
    )
    parser.add_argument("--tool", choices=["auto", "wrk", "python"], default="auto")
    parser.add_argument("--db", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB))
    args = parser.parse_args()
    tool = args.tool if args.tool != "auto" else ("wrk" if loadgen.have_wrk() else "python")
    if tool == "python":
        print("wrk not found (apt-get install wrk): using the threaded Python client, which")
        print("competes with the server for the same cores; ratios stay comparable.")

    redis_url = _redis_url()
    env = _env(args.db, redis_url)
    _ensure_database(args.db)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True
    )
    _django(env)
    from django.core.cache import cache

    from bench.seed import ensure_account, oauth_access_token, seed, seed_labels, seed_vectors

    print(f"Seeding {args.n:,} skills into {args.db} …")
    started = time.perf_counter()
    _, secret = ensure_account()
    added = seed(args.n)
    print(f"  {added:,} added in {time.perf_counter() - started:.1f} s")
    seed_labels()
    seed_vectors(progress=lambda _: None)
    _analyze()
    cache.clear()
    auth = f"Bearer {secret}"

    from bench.seed import TEAM_SLUG
    from skills_app.models import Skill

    in_db = Skill.objects.filter(workspace__slug=TEAM_SLUG).count()
    scenarios = _paths(args.sample)
    server, base = _start_server(env, args.workers)
    mcp_server, mcp_base = _start_mcp_server(env, args.workers)
    # Usage counting off and on, each on a gunicorn of its own that serves nothing else: the main
    # server's workers also hold what every other scenario built (the vector index, caches of
    # other skills), which made counting look 5-9 % dearer than it is beside a server that
    # served one scenario only.
    uncounted_server, uncounted_base = _start_server({**env, "XMEMO_USAGE": "0"}, args.workers)
    counted_server, counted_base = _start_server({**env, "XMEMO_USAGE": "1"}, args.workers)
    # The MCP service on the one-step call's public fallback, the SDK's dispatch
    # (docs/operations.md).
    sdk_server, sdk_base = _start_mcp_server({**env, "XMEMO_MCP_FAST_PATH": "0"}, args.workers)
    results: list[loadgen.Result] = []
    try:
        for name in ("level0", "level1", "level2", "level1-labelled", "level1-label"):
            _check(base, scenarios[name], auth)
        if not args.level0_only:
            for name in MCP_LEVEL1:
                _check(mcp_base, scenarios[name], auth)
            _check(sdk_base, scenarios[MCP_LEVEL1[0]], auth)
            oauth_auth = f"Bearer {oauth_access_token(base)}"
            _check(base, scenarios["level1"], oauth_auth)

        level0_connections = args.level0_connections or args.workers

        def measure(
            label: str,
            key: str,
            seconds: float,
            token: str | None = None,
            at: str = "",
            connections: int = 0,
        ) -> loadgen.Result:
            requests = scenarios[key].with_auth(None if key == "bare" else (token or auth))
            if not connections:
                connections = level0_connections if key.startswith("level0") else args.connections
            return loadgen.run(
                label,
                at or base,
                requests,
                seconds=seconds,
                connections=connections,
                tool=tool,
            )

        def timed(label: str, key: str, connections: int = 0) -> loadgen.Result:
            # warm-up: caches, prepared statements
            measure(label, key, args.warmup, connections=connections)
            return measure(label, key, args.seconds, connections=connections)

        def level0(at: int) -> None:
            """Level 0 at ``at`` skills: concurrent (one connection per worker), then as an agent
            calls it — one client, each search sent when the last one has answered (the
            query's embedding included: the bench's queries are distinct, so the per-process
            cache of recent query embeddings seldom answers). First, not measured, Level 0 load
            for INDEX_WARMUP_SECONDS: a new worker's first search builds its vector index (a
            few seconds at 100,000 skills; docs/search.md), and after the minutes of Level 1
            rounds the skills table's pages are no longer cached: this machine's kernel drops
            file pages idle for a minute (DAMON ``pageout``), and the first Level 0 block read
            them back from disk (25-107 MB/s; p95 33-37 ms where the block after it gave
            17-20)."""
            measure("(Level 0 warm-up)", "level0", INDEX_WARMUP_SECONDS)
            results.append(timed(f"Level 0 @ {at:,}", "level0"))
            results.append(timed(f"Level 0 @ {at:,}, {SHORT}", "level0-short"))
            results.append(timed(f"Level 0 @ {at:,}, {SEQUENTIAL}", "level0", connections=1))

        windows: dict[str, list[loadgen.Result]] = {}
        # The CPU seconds the serving processes spent in each window (bench/cpu.py; None
        # where a worker came or went).
        spent: dict[str, list[float | None]] = {}
        if args.level0_only:
            results.append(timed("bare view", "bare"))
        else:
            # The MCP workers have served nothing yet, where gunicorn's have just served the warm-up
            # above: give them as much before either door is timed (their per-process caches, and
            # what the first calls of each era build), or the first era measured pays it.
            for name in MCP_LEVEL1:
                measure("(MCP warm-up)", name, MCP_WARMUP_SECONDS, at=mcp_base)
            measure("(MCP warm-up)", MCP_LEVEL1[0], MCP_WARMUP_SECONDS, at=sdk_base)
            # The scenarios compared with one another (bare view, Level 1 by both doors and both
            # kinds of token, Level 2) are measured in interleaved rounds and each one's windows
            # pooled: this machine's speed drifts by tens of percent within a minute, and one
            # window after another would compare the machine's moments, not the code paths.
            api_level1: Scenario = (API_LEVEL1, "level1", None, "")
            oauth_level1: Scenario = (OAUTH_LEVEL1, "level1", oauth_auth, "")
            # The costs compared by the server's CPU per request (bench/cpu.py), in groups of
            # windows back to back: usage counting off and on (two gunicorns of their own), and
            # labels (the unlabelled half, the labelled half, the labelled half by label=).
            cost_groups: list[list[Scenario]] = [
                [
                    (UNCOUNTED_LEVEL1, "level1-usage", None, uncounted_base),
                    (COUNTED_LEVEL1, "level1-usage", None, counted_base),
                ],
                [
                    (UNLABELLED_LEVEL1, "level1-unlabelled", None, ""),
                    (LABELLED_LEVEL1, "level1-labelled", None, ""),
                    (BY_LABEL_LEVEL1, "level1-label", None, ""),
                ],
            ]
            costs = [scenario for group in cost_groups for scenario in group]
            # The two kinds of token on one Level 1 path are compared with each other only: their
            # windows run back to back, each first in every other round, so that their ratio is
            # the tokens' cost and not the machine's drift between two moments of a round.
            by_mcp: list[list[Scenario]] = [[(name, name, None, mcp_base)] for name in MCP_LEVEL1]
            by_mcp.append([(MCP_SDK_DISPATCH, MCP_LEVEL1[0], None, sdk_base)])
            units: list[list[Scenario]] = [
                [("bare view", "bare", None, "")],
                [api_level1, oauth_level1],
                *by_mcp,
                [("Level 2 resource", "level2", None, "")],
            ]
            compared = [scenario for unit in units for scenario in unit]
            # Every Level 1 and 2 request of the compared scenarios through every worker first: a
            # recall's first answer in a process costs more than the next ones (its caches), and a
            # timed warm-up on a slow machine leaves the scenarios requested less often colder (the
            # labelled half, the server counting no usage: 13 % and 29 % "dearer" before this).
            primed: set[tuple[str, str]] = set()
            for _, key, token, at in compared + costs:
                if key.startswith(("level1", "level2")) and (key, at) not in primed:
                    primed.add((key, at))
                    failed = loadgen.prime(
                        at or base,
                        scenarios[key].with_auth(token or auth),
                        times=3 * args.workers,
                        connections=args.connections,
                    )
                    if failed:
                        raise RuntimeError(f"{key}: {failed} requests failed while priming")
            for label, key, token, at in compared + costs:  # warm-up: caches, prepared statements
                measure(label, key, args.warmup, token, at)
            windows.update({label: [] for label, *_ in compared + costs})
            # The CPU seconds the serving processes spent in each of those windows (bench/cpu.py;
            # None where a worker came or went).
            spent.update({label: [] for label, *_ in compared + costs})
            pids = {
                base: server.pid,
                uncounted_base: uncounted_server.pid,
                counted_base: counted_server.pid,
                mcp_base: mcp_server.pid,
                sdk_base: sdk_server.pid,
            }

            def window(label: str, key: str, seconds: float, token: str | None, at: str) -> None:
                before = cpu.read(pids[at or base])
                windows[label].append(measure(label, key, seconds, token, at))
                spent[label].append(cpu.spent(before, cpu.read(pids[at or base])))

            order = random.Random(3)
            for round_number in range(args.rounds):
                # Each round in an order of its own, so that no scenario always follows the same one
                # (the MCP server's windows, say) into a machine that one left behind; a pause
                # before each window, for the last one's connections to close and its server to
                # quiet down; then a second of the same load, not counted, before the window. After
                # a second idle, this machine runs a large working set many times slower for its
                # first milliseconds (a loop over 300,000 objects: 1.6 ms warm, 17-117 ms after
                # 0.2-2.1 s idle), and the first requests of every window paid it: counted, they
                # made the p99 of MCP recall 28 ms where it is 12 ms under steady load, of Level 1
                # 24 ms where it is 12, of the bare view 13 where it is 10 (windows of each kind
                # alternating in one run).
                for unit in order.sample(units, len(units)):
                    for label, key, token, at in unit[:: -1 if round_number % 2 else 1]:
                        time.sleep(WINDOW_PAUSE_SECONDS)
                        measure(label, key, WINDOW_WARMUP_SECONDS, token, at)
                        window(label, key, args.seconds / args.rounds, token, at)
            # The costs: many short windows, each group's back to back with no pause (no latency is
            # judged here), its order reversed every other round, so that each ratio compares two
            # neighbouring seconds of the machine; the median of the rounds' ratios is the figure.
            for round_number in range(args.cost_rounds):
                for group in cost_groups[:: -1 if round_number % 2 else 1]:
                    for label, key, token, at in group[:: -1 if round_number % 2 else 1]:
                        window(label, key, args.cost_seconds, token, at)
            results.extend(loadgen.merge(label, windows[label]) for label, *_ in compared + costs)
        bare = results[0]
        level0(in_db)
        if args.level0_scale > args.n:
            _stop(server)
            _stop(mcp_server)
            print(f"Topping up to {args.level0_scale:,} skills for Level 0 …")
            started = time.perf_counter()
            added = seed(args.level0_scale, revisions=1, progress=lambda _: None)
            seed_vectors(progress=lambda _: None)
            _analyze()
            print(f"  {added:,} added in {time.perf_counter() - started:.1f} s (vectors, VACUUM)")
            server, base = _start_server(env, args.workers)
            level0(args.level0_scale)
    finally:
        _stop(server)
        _stop(mcp_server)
        _stop(uncounted_server)
        _stop(counted_server)
        _stop(sdk_server)

    print()
    print(
        f"gunicorn {args.workers} sync workers (MCP: xmemo.serve, {args.workers} uvicorn workers), "
        f"{args.connections} connections "
        f"(Level 0: {args.level0_connections or args.workers}), {tool}, {args.seconds:.0f} s each "
        f"after {args.warmup:.0f} s warm-up (all but Level 0 in {args.rounds} interleaved "
        f"rounds), cache: {'redis' if redis_url else 'local memory'}"
    )
    cpu_ms = {label: _cpu_ms(windows[label], spent[label]) for label in spent}
    print(_table(results, bare, cpu_ms))
    by_name = {r.name: r for r in results}
    print()
    verdicts = []
    if not args.level0_only:
        level1 = by_name[API_LEVEL1]
        ok = level1.rps >= LEVEL1_MIN_SHARE * bare.rps
        verdicts.append(ok)
        print(
            f"{'PASS' if ok else 'FAIL'}  {API_LEVEL1}, every production feature on: "
            f"{level1.rps / bare.rps:.2f}x the bare view's throughput (target >= "
            f"{LEVEL1_MIN_SHARE:.2f}x)"
        )
        r = by_name["Level 2 resource"]
        ok = r.rps >= 0.5 * bare.rps and r.p99_ms <= 10
        verdicts.append(ok)
        print(
            f"{'PASS' if ok else 'FAIL'}  Level 2 resource: {r.rps / bare.rps:.0%} of bare "
            f"throughput (target >= 50%), p99 {r.p99_ms:.2f} ms (target <= 10 ms)"
        )
        ok, line = tail_verdict(
            windows[API_LEVEL1], windows[bare.name], (level1, bare), LEVEL1_TAIL_RATIO
        )
        verdicts.append(ok)
        print(line)
        for label in MCP_LEVEL1:
            r = by_name[label]
            share = r.rps / level1.rps
            ok = share >= MCP_MIN_SHARE and r.p99_ms <= MCP_P99_MS and r.errors == 0
            verdicts.append(ok)
            print(
                f"{'PASS' if ok else 'FAIL'}  {label}: {r.rps:,.0f} calls/s, {share:.2f}x REST's "
                f"{level1.rps:,.0f} (target >= {MCP_MIN_SHARE:.2f}x), p99 {r.p99_ms:.2f} ms "
                f"(target <= {MCP_P99_MS:.0f} ms)"
            )
        what = "one-step tools/call (skills_app/mcp/fast.py)"
        print(fast_path_verdict(what, by_name[MCP_LEVEL1[0]], by_name[MCP_SDK_DISPATCH]))
        api, oauth = by_name[API_LEVEL1], by_name[OAUTH_LEVEL1]
        ratio = api.rps / oauth.rps  # cost per request, OAuth over API token
        verdicts.append(ratio <= OAUTH_MAX_RATIO)
        print(
            f"{'PASS' if ratio <= OAUTH_MAX_RATIO else 'FAIL'}  Level 1 with an OAuth access "
            f"token: {oauth.rps:,.0f} req/s vs {api.rps:,.0f} with an API token, cost ratio "
            f"{ratio:.3f} (target <= {OAUTH_MAX_RATIO:.2f}); p50 {oauth.p50_ms:.2f} vs "
            f"{api.p50_ms:.2f} ms"
        )

        def versus(label: str, reference: str, detail: str, target: float) -> None:
            ratios = cost_ratios(windows[label], spent[label], windows[reference], spent[reference])
            ours, theirs = by_name[label], by_name[reference]
            ok, line = cost_verdict(
                detail,
                ratios,
                target,
                f"{cpu_ms[label]:.3f} vs {cpu_ms[reference]:.3f} ms CPU, "
                f"{ours.rps:,.0f} vs {theirs.rps:,.0f} req/s (for information)",
            )
            verdicts.append(ok)
            print(line)

        versus(
            COUNTED_LEVEL1, UNCOUNTED_LEVEL1, "Level 1 with usage counting vs off", USAGE_MAX_RATIO
        )
        versus(
            LABELLED_LEVEL1, UNLABELLED_LEVEL1, "Level 1 with 3 labels vs none", LABELS_MAX_RATIO
        )
        versus(BY_LABEL_LEVEL1, UNLABELLED_LEVEL1, "Level 1 by label= vs by slug", LABELS_MAX_RATIO)
        # Each production feature's cost, in this process (the servers are gone: less noise).
        from bench import features

        def slugs_of(key: str) -> list[str]:
            return [path.split("slug=")[1].split("&")[0] for path in scenarios[key].paths]

        for line in features.report(secret, slugs_of("level1"), slugs_of("level1-labelled")):
            print(line)
    embed_p50, embed_p95 = _embedding_time(random.Random(2))
    print(
        f"      query embedding alone ({_model_name()}, in process, one thread, distinct "
        f"queries): p50 {embed_p50:.2f} ms, p95 {embed_p95:.2f} ms"
    )
    for r in results:
        if r.name.startswith("Level 0"):
            ok = r.requests > 0 and r.errors == 0 and r.p95_ms <= LEVEL0_P95_MS
            verdicts.append(ok)
            print(
                f"{'PASS' if ok else 'FAIL'}  {r.name}: p95 {r.p95_ms:.2f} ms, query embedding "
                f"included (target <= {LEVEL0_P95_MS:.0f} ms)"
            )
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"recall-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(
        json.dumps(
            {
                "n": args.n,
                "workers": args.workers,
                "connections": args.connections,
                "tool": tool,
                "cache": "redis" if redis_url else "locmem",
                "rounds": args.rounds,
                "results": [r.summary() for r in results],
            },
            indent=2,
        )
    )
    print(f"\n(results also in {out.relative_to(ROOT)})")
