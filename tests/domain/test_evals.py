"""evals/triggers.json and the figures of a trigger check (docs/contract.md §22)."""

from __future__ import annotations

import json

import pytest

from skills_app.domain.evals import (
    MAX_TASK_CHARS,
    MAX_TASKS,
    Triggers,
    figures,
    outcome_check,
    success_rate,
    triggers_parse,
)
from skills_app.errors import ValidationFailed


def _raw(document: object) -> bytes:
    return json.dumps(document).encode()


def test_a_valid_file_reads_both_sets() -> None:
    parsed = triggers_parse(_raw({"should_trigger": ["restore a db"], "should_not_trigger": []}))
    assert parsed == Triggers(should_trigger=("restore a db",), should_not_trigger=())


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ({"should_trigger": "restore"}, "should_trigger"),
        ({"should_trigger": ["x"] * (MAX_TASKS + 1)}, "should_trigger"),
        ({"should_not_trigger": ["y" * (MAX_TASK_CHARS + 1)]}, "should_not_trigger"),
        ({"should_not_trigger": ["  "]}, "should_not_trigger"),
        ({"should_not_trigger": [3]}, "should_not_trigger"),
        ({"should_trigger": [], "when": []}, "when"),
        (["a list"], "evals/triggers.json"),
    ],
)
def test_a_bad_file_names_the_field(document: object, field: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        triggers_parse(_raw(document))
    assert caught.value.details["field"] == field


def test_not_json_names_the_file() -> None:
    with pytest.raises(ValidationFailed) as caught:
        triggers_parse(b"{not json")
    assert caught.value.details["field"] == "evals/triggers.json"


def test_figures_count_ranks_and_collisions_both_ways() -> None:
    triggers = Triggers(should_trigger=("a", "b", "c"), should_not_trigger=("n",))
    ranked = {
        "a": ["me", "x"],
        "b": ["x", "y", "me"],
        "c": ["x", "y", "z", "w"],
        "n": ["me"],
        "theirs": ["me", "y"],
        "kept": ["y", "me"],
    }
    result = figures(
        slug="me", triggers=triggers, ranked=ranked, others=[("y", "theirs"), ("y", "kept")]
    )
    assert (result["hits_at_1"], result["hits_at_3"], result["false_triggers"]) == (1, 2, 1)
    assert result["recall_at_1"] == pytest.approx(1 / 3, abs=1e-4)
    assert result["recall_at_3"] == pytest.approx(2 / 3, abs=1e-4)
    assert result["false_trigger_rate"] == 1.0
    assert [t["rank"] for t in result["tasks"]] == [1, 3, None, 1]
    assert [t["winner"] for t in result["tasks"]] == ["me", "x", "x", "me"]
    assert result["collisions"] == {
        "outranked_by": [
            {"slug": "x", "tasks": ["b", "c"]},
            {"slug": "y", "tasks": ["b", "c"]},
            {"slug": "z", "tasks": ["c"]},
        ],
        "wins_from": [{"slug": "y", "tasks": ["theirs"]}],
    }


def test_no_tasks_of_a_kind_is_no_share() -> None:
    result = figures(slug="me", triggers=Triggers((), ()), ranked={}, others=[])
    assert result["recall_at_1"] is None
    assert result["false_trigger_rate"] is None


def test_outcomes_and_their_rate() -> None:
    assert outcome_check("partial", None) == ("partial", "")
    with pytest.raises(ValidationFailed):
        outcome_check("great", "")
    with pytest.raises(ValidationFailed):
        outcome_check("success", "n" * 1001)
    assert success_rate({"success": 3, "partial": 1, "failure": 0}) == 0.75
    assert success_rate({}) is None
