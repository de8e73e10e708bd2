"""Save and Level 1 with scanning on and off, in one run (docs/scanning.md, "Off the request
path"). ``python -m bench.scan_cost [--rounds 10] [--per-round 20]``

In process through the whole Django stack on PostgreSQL, Redis the broker as in production;
interleaved rounds, the arms' order reversed every round, each ratio the median of the rounds'
ratios of medians. Save (``POST /v1/skills/save``, a new body each time): scan *off* (nothing
handed over), *on* (handed to the scan queue after commit, the real path) and *inline* (the
scan in the request, for comparison). Level 1 (``GET /v1/recall?slug=``) of scanned skills:
the ``scan`` member *off* (a constant) and *on* (the stored scan, as served)."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any
from unittest import mock

from bench.recall import DEFAULT_DB, ROOT, _django, _ensure_database, _env, _redis_url

QUEUE = "xmemo-bench-scan"
SKILLS = 20
SAVE_MAX_RATIO = 1.10
LEVEL1_MAX_RATIO = 1.10
SCRIPT = "#!/bin/sh\nset -eu\n" + "".join(
    f'echo "step {i}: checking the release notes"\n' for i in range(40)
)


def _body(number: int) -> str:
    steps = "".join(
        f"{i}. Read the checklist item {i} of run {number} and tick it off.\n" for i in range(60)
    )
    return f"# Release run {number}\n\nFollow each step in order.\n\n{steps}"


def _save_payload(number: int) -> dict[str, Any]:
    return {
        "workspace": "",
        "slug": f"release-{number % SKILLS}",
        "name": "Release",
        "description": "Cut a release: checklist, notes and the status script.",
        "instruction_body": _body(number),
        "components": [
            {"logical_path": "scripts/status.sh", "type": "script", "content": SCRIPT},
            {"logical_path": "references/notes.md", "type": "reference", "content": "# Notes\n"},
        ],
        "intent": "publish",
    }


def _setup() -> tuple[Any, str]:
    """The bench person, their personal workspace's slug and a token; ``SKILLS`` published
    skills there, each scanned."""
    from django.test import Client

    from skills_app.access import Actor
    from skills_app.models import Workspace
    from skills_app.services.accounts import token_create, user_create
    from skills_app.services.scans import scans_catch_up

    user = user_create(username=f"scan-cost-{os.getpid()}")
    _, secret = token_create(
        actor=Actor(user=user, via="cli"),
        user=user,
        name="bench",
        scopes=["skills:read", "skills:write"],
    )
    workspace = Workspace.objects.get(kind="personal", created_by=user)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    with mock.patch("skills_app.services.scans.scans_request"):
        for number in range(SKILLS):
            _post_save(client, workspace.slug, number)
    scans_catch_up()
    return client, workspace.slug


def _post_save(client: Any, workspace: str, number: int) -> None:
    payload = _save_payload(number)
    payload["workspace"] = workspace
    answer = client.post("/v1/skills/save", payload, content_type="application/json")
    if answer.status_code not in (200, 201):
        raise RuntimeError(f"save answered {answer.status_code}: {answer.content[:300]!r}")


def _inline(revision_ids: Any) -> None:
    from skills_app.services.scans import scans_compute

    scans_compute(revision_ids=list(revision_ids))


def _scan_off() -> AbstractContextManager[Any]:
    return mock.patch("skills_app.services.scans.scans_request")


def _scan_inline() -> AbstractContextManager[Any]:
    return mock.patch("skills_app.services.scans.scans_request", _inline)


def _member_off() -> AbstractContextManager[Any]:
    from skills_app.selectors.scans import scan_summaries

    pending = scan_summaries([0])[0]  # the pending scan's member (no revision 0)
    return mock.patch("skills_app.selectors.recall.routing.served_scan", return_value=pending)


@contextmanager
def _timer(times: list[float]) -> Iterator[None]:
    started = time.perf_counter()
    yield
    times.append((time.perf_counter() - started) * 1000)


def _rounds(
    arms: dict[str, Callable[[], AbstractContextManager[Any]]],
    request: Callable[[], None],
    *,
    rounds: int,
    per_round: int,
) -> dict[str, list[list[float]]]:
    """Each arm's request times, per round; arms in turn, the order reversed every round."""
    times: dict[str, list[list[float]]] = {arm: [] for arm in arms}
    names = list(arms)
    for round_number in range(rounds):
        for arm in names[:: -1 if round_number % 2 else 1]:
            taken: list[float] = []
            with arms[arm]():
                for _ in range(per_round):
                    with _timer(taken):
                        request()
            times[arm].append(taken)
    return times


def _ratio(ours: list[list[float]], base: list[list[float]]) -> float:
    return statistics.median(
        statistics.median(a) / statistics.median(b) for a, b in zip(ours, base, strict=True)
    )


def _p50(rounds: list[list[float]]) -> float:
    return statistics.median(t for window in rounds for t in window)


def _queued() -> int:
    from skills_app.infra.queue import queue_depth

    return queue_depth(QUEUE)


def _purge() -> int:
    from celery import current_app

    with current_app.connection_for_write() as conn:
        return int(conn.default_channel.queue_purge(QUEUE) or 0)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.scan_cost", description=__doc__)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--per-round", type=int, default=20)
    base_db = os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB)
    parser.add_argument("--db", default=f"{base_db}_scan_cost")
    args = parser.parse_args()
    redis_url = _redis_url()
    if redis_url is None:
        print("bench.scan_cost: skipped, no Redis (the scan queue needs a broker)")
        return
    env = _env(args.db, redis_url)
    env["XMEMO_SCAN_QUEUE"] = QUEUE
    env["XMEMO_TASKS_EAGER"] = "0"
    _ensure_database(args.db)
    migrate = [sys.executable, "manage.py", "migrate", "--noinput", "-v0"]
    subprocess.run(migrate, cwd=ROOT, env=env, check=True)
    _django(env)
    from skills_app.domain.scan import SCANNER_VERSION
    from skills_app.services.scans import scans_catch_up

    _purge()
    client, workspace = _setup()
    counter = iter(range(SKILLS, 10**9))

    def save() -> None:
        _post_save(client, workspace, next(counter))

    slugs = iter(range(10**9))

    def level1() -> None:
        answer = client.get("/v1/recall", {"slug": f"release-{next(slugs) % SKILLS}"})
        if answer.status_code != 200:
            raise RuntimeError(f"Level 1 answered {answer.status_code}")

    # Warm both paths first (caches, prepared statements, the scanner's imports).
    _rounds({"on": nullcontext, "inline": _scan_inline}, save, rounds=1, per_round=5)
    _rounds({"on": nullcontext}, level1, rounds=1, per_round=2 * SKILLS)
    _purge()
    saves = _rounds(
        {"off": _scan_off, "on": nullcontext, "inline": _scan_inline},
        save,
        rounds=args.rounds,
        per_round=args.per_round,
    )
    handed_over = _queued()
    _purge()
    # The scan queue's work, done here as its worker would: every revision the saves stored
    # unscanned (Level 1 below then serves scanned revisions only).
    started = time.perf_counter()
    scanned = scans_catch_up()
    scan_ms = (time.perf_counter() - started) * 1000 / max(scanned, 1)
    level1_times = _rounds(
        {"off": _member_off, "on": nullcontext},
        level1,
        rounds=args.rounds,
        per_round=args.per_round,
    )

    on_saves = args.rounds * args.per_round
    print(
        f"Scanning and the request path ({SCANNER_VERSION}; {args.rounds} interleaved rounds "
        f"of {args.per_round} requests per arm, in process, PostgreSQL, Redis broker)"
    )
    save_ratio = _ratio(saves["on"], saves["off"])
    inline_ratio = _ratio(saves["inline"], saves["off"])
    level1_ratio = _ratio(level1_times["on"], level1_times["off"])
    verdicts = [
        ("Save, scan handed to the queue vs none", save_ratio, SAVE_MAX_RATIO),
        ("Level 1, scan member served vs none", level1_ratio, LEVEL1_MAX_RATIO),
    ]
    print(
        f"  save p50: off {_p50(saves['off']):.2f} ms, on {_p50(saves['on']):.2f} ms "
        f"({handed_over} of {on_saves} saves handed to {QUEUE}), inline "
        f"{_p50(saves['inline']):.2f} ms"
    )
    print(
        f"  Level 1 p50: scan member off {_p50(level1_times['off']):.2f} ms, "
        f"on {_p50(level1_times['on']):.2f} ms"
    )
    for label, ratio, target in verdicts:
        verdict = "PASS" if ratio <= target else "FAIL"
        print(f"{verdict}  {label}: {ratio:.3f}x (target <= {target:.2f}x)")
    print(
        f"      for comparison, the scan in the request: save {inline_ratio:.3f}x; the queue's "
        f"work, {scanned} revisions scanned afterwards: {scan_ms:.1f} ms a revision"
    )


if __name__ == "__main__":
    main()
