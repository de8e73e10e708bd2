"""``skills/list`` (the MCP Skills extension, docs/contract.md §20) beside Level 1 over MCP.

    python -m bench.skills_list [--sizes 100,1000] [--seconds 5]

Seeds a team per size in a database of its own, starts the MCP service as production runs it,
and has one client per team (each request when the last has answered) enumerate the whole
listing and recall one skill's Level 1, in interleaved rounds. Prints p50/p99 of each, the
listing's cost per skill at each size (goal: flat from 100 to 1,000 skills) and one page's
queries, cold and warm."""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from functools import partial
from typing import Any

import httpx

from bench.recall import (
    DEFAULT_DB,
    ROOT,
    _django,
    _ensure_database,
    _env,
    _redis_url,
    _start_mcp_server,
    _stop,
)

VERSION = "2026-07-28"


def _meta() -> dict[str, Any]:
    from mcp_types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY

    return {PROTOCOL_VERSION_META_KEY: VERSION, CLIENT_CAPABILITIES_META_KEY: {}}


def _post(client: httpx.Client, method: str, params: dict[str, Any], name: str = "") -> Any:
    headers = {"Mcp-Method": method, **({"Mcp-Name": name} if name else {})}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": _meta()}}
    response = client.post("/mcp", json=body, headers=headers)
    answer = response.json()
    if "result" not in answer:
        raise RuntimeError(f"{method}: {answer}")
    return answer["result"]


def list_all(client: httpx.Client) -> int:
    """Every entry of ``skills/list``, page by page; answers how many."""
    count, cursor = 0, None
    while True:
        page = _post(client, "skills/list", {"cursor": cursor} if cursor else {})
        count += len(page["skills"])
        cursor = page.get("nextCursor")
        if not cursor:
            return count


def _timed(seconds: float, once: Any) -> list[float]:
    """Milliseconds of each call of ``once()`` made in ``seconds`` (at least 20)."""
    times: list[float] = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(times) < 20:
        started = time.perf_counter()
        once()
        times.append((time.perf_counter() - started) * 1000)
    return times


def _p(times: list[float], q: float) -> float:
    return statistics.quantiles(times, n=100, method="inclusive")[int(q) - 1]


def _queries(secret: str) -> tuple[int, int, int]:
    """Queries of the first page of ``skills/list`` in this process: cold, then warm, and the
    entries on it."""
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from skills_app.gateway.auth import actor_for_secret
    from skills_app.infra.cache import clear_local
    from skills_app.selectors.recall import clear_resolutions
    from skills_app.selectors.recall.entries import listing

    actor = actor_for_secret(secret=secret, via="mcp", origin=lambda: "", ip=None)
    cache.clear()
    clear_local()
    clear_resolutions()
    counts = []
    for _ in range(2):
        with CaptureQueriesContext(connection) as captured:
            listed, _ = listing(actor=actor, cursor=None, skills_list=True, published_only=False)
        counts.append(len(captured))
    return counts[0], counts[1], len(listed)


def _workspaces(sizes: list[int]) -> dict[int, tuple[str, list[str]]]:
    """A team per size holding that many published skills (``bench.seed``'s content), and a
    read-only token restricted to it: size -> (token secret, slugs)."""
    from django.db import transaction

    from bench.seed import _seed_batch as seed_batch
    from bench.seed import ensure_account, seed
    from skills_app.access import Actor
    from skills_app.models import Membership, Skill, Workspace
    from skills_app.services.accounts import token_create

    team, _ = ensure_account()
    seed(max(sizes), progress=lambda _: None)
    owner = team.created_by
    tokens = {}
    for size in sizes:
        if size == max(sizes):
            workspace = team
        else:
            workspace, _ = Workspace.objects.get_or_create(
                slug=f"bench-list-{size}",
                defaults={"name": f"{size} skills", "kind": "team", "created_by": owner},
            )
            Membership.objects.get_or_create(workspace=workspace, user=owner, role="owner")
            existing = Skill.objects.filter(workspace=workspace).count()
            with transaction.atomic():
                seed_batch(workspace, range(existing, size), 3)
        _, secret = token_create(
            actor=Actor(user=owner, via="cli"),
            user=owner,
            name=f"list-{size}",
            scopes=["skills:read"],
            workspace=workspace,
        )
        slugs = list(Skill.objects.filter(workspace=workspace).values_list("slug", flat=True))
        tokens[size] = (secret, slugs)
    return tokens


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.skills_list", description=__doc__)
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--seconds", type=float, default=10.0, help="per size and scenario")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--workers", type=int, default=2)
    base_db = os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB)
    parser.add_argument("--db", default=f"{base_db}_skills_list")
    args = parser.parse_args()
    sizes = sorted(int(size) for size in args.sizes.split(","))

    env = _env(args.db, _redis_url())
    _ensure_database(args.db)
    migrate = [sys.executable, "manage.py", "migrate", "--noinput", "-v0"]
    subprocess.run(migrate, cwd=ROOT, env=env, check=True)
    _django(env)
    workspaces = _workspaces(sizes)
    queries = {size: _queries(secret) for size, (secret, _) in workspaces.items()}
    lists: dict[int, list[float]] = {size: [] for size in sizes}
    recalls: dict[int, list[float]] = {size: [] for size in sizes}
    rng = random.Random(0)
    server, base = _start_mcp_server(env, args.workers)
    window = args.seconds / args.rounds
    try:
        clients = {
            size: httpx.Client(
                base_url=base, headers={"Authorization": f"Bearer {secret}"}, timeout=60
            )
            for size, (secret, _) in workspaces.items()
        }
        for size, client in clients.items():
            assert list_all(client) == size  # and warm: every page cached in some worker
        # Interleaved windows, a new order each round, so that both sizes share the machine's
        # state over the same stretch of time (other work on it moves every figure).
        for _ in range(args.rounds):
            for size in rng.sample(sizes, len(sizes)):
                client, slugs = clients[size], workspaces[size][1]
                lists[size] += _timed(window, partial(list_all, client))
                recalls[size] += _timed(window, partial(_recall, client, slugs, rng))
        for client in clients.values():
            client.close()
    finally:
        _stop(server)

    print(f"skills/list beside Level 1 over MCP ({VERSION}, one sequential client)")
    per_skill = {size: statistics.median(lists[size]) / size for size in sizes}
    for size in sizes:
        cold, warm, page = queries[size]
        print(
            f"  {size:>5,} skills: skills/list, all {-(-size // page)} page(s): "
            f"p50 {_p(lists[size], 50):7.2f} ms  p99 {_p(lists[size], 99):7.2f} ms  "
            f"({per_skill[size] * 1000:.1f} us per skill) | Level 1 (recall_cloud_skill): "
            f"p50 {_p(recalls[size], 50):5.2f} ms  p99 {_p(recalls[size], 99):5.2f} ms | "
            f"queries per page of {page}: {cold} cold, {warm} warm"
        )
    if len(sizes) > 1:
        ratio = per_skill[sizes[-1]] / per_skill[sizes[0]]
        verdict = "OK" if ratio <= 1.25 else "MISSED"
        print(
            f"  cost per skill, {sizes[-1]:,} vs {sizes[0]:,} skills: {ratio:.2f}x "
            f"(goal: flat, <= 1.25x) {verdict}"
        )


def _recall(client: httpx.Client, slugs: list[str], rng: random.Random) -> None:
    arguments = {"slug": rng.choice(slugs)}
    params = {"name": "recall_cloud_skill", "arguments": arguments}
    _post(client, "tools/call", params, name="recall_cloud_skill")


if __name__ == "__main__":
    main()
