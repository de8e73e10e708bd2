"""Trigger checks and outcomes, the pure part (docs/contract.md §22).

A skill may carry ``evals/triggers.json``: the tasks an agent should pick it for and those it
should not. ``triggers_parse`` is the one reading of that file (the save refuses what it refuses,
naming the field); ``figures`` turns the ranks Level 0 answered for each task into the shares
and collisions the answer holds. Nothing here ranks: ranking is Level 0's alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from skills_app.domain.text import unstorable_reason
from skills_app.errors import ValidationFailed

TRIGGERS_PATH = "evals/triggers.json"
MAX_TASKS = 50
MAX_TASK_CHARS = 500
KEYS = ("should_trigger", "should_not_trigger")
OUTCOMES = ("success", "partial", "failure")
MAX_NOTE_CHARS = 1000


@dataclass(frozen=True)
class Triggers:
    should_trigger: tuple[str, ...]
    should_not_trigger: tuple[str, ...]


def _refuse(message: str, field: str) -> ValidationFailed:
    return ValidationFailed(message, details={"field": field, "path": TRIGGERS_PATH})


def _tasks(value: object, key: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _refuse(f"{TRIGGERS_PATH}: {key} must be a list of tasks (strings).", key)
    if len(value) > MAX_TASKS:
        raise _refuse(
            f"{TRIGGERS_PATH}: {key} holds {len(value)} tasks; the limit is {MAX_TASKS}.", key
        )
    tasks = []
    for index, task in enumerate(value):
        if not isinstance(task, str) or not task.strip() or len(task) > MAX_TASK_CHARS:
            raise _refuse(
                f"{TRIGGERS_PATH}: {key}[{index}] must be a task of 1 to {MAX_TASK_CHARS}"
                " characters, not blank.",
                key,
            )
        if unstorable_reason(task):
            raise _refuse(f"{TRIGGERS_PATH}: {key}[{index}] {unstorable_reason(task)}.", key)
        tasks.append(task)
    return tuple(tasks)


def triggers_parse(content: bytes) -> Triggers:
    """The trigger sets of an ``evals/triggers.json``; ValidationFailed naming the field (the
    file's for a file that is no JSON object, a key it does not know)."""
    try:
        document = json.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise _refuse(f"{TRIGGERS_PATH} is not JSON (UTF-8).", TRIGGERS_PATH) from None
    if not isinstance(document, dict):
        raise _refuse(
            f'{TRIGGERS_PATH} must be an object: {{"should_trigger": [...],'
            ' "should_not_trigger": [...]}.',
            TRIGGERS_PATH,
        )
    unknown = sorted(set(document) - set(KEYS))
    if unknown:
        raise _refuse(
            f"{TRIGGERS_PATH} holds {unknown[0]!r}, which it does not know; the keys are"
            " should_trigger and should_not_trigger.",
            unknown[0],
        )
    return Triggers(
        should_trigger=_tasks(document.get("should_trigger", []), "should_trigger"),
        should_not_trigger=_tasks(document.get("should_not_trigger", []), "should_not_trigger"),
    )


class TaskResult(TypedDict):
    task: str
    expected: str  # "trigger" | "no_trigger"
    rank: int | None  # 1-based place of the skill in Level 0's answer; None: not in it
    winner: str | None  # the slug Level 0 answered first; None: no result


class Collision(TypedDict):
    slug: str
    tasks: list[str]


class Collisions(TypedDict):
    outranked_by: list[Collision]
    wins_from: list[Collision]


class Figures(TypedDict):
    recall_at_1: float | None
    recall_at_3: float | None
    false_trigger_rate: float | None
    should_trigger: int
    hits_at_1: int
    hits_at_3: int
    should_not_trigger: int
    false_triggers: int
    tasks: list[TaskResult]
    collisions: Collisions


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _grouped(pairs: Sequence[tuple[str, str]]) -> list[Collision]:
    by_slug: dict[str, list[str]] = {}
    for slug, task in pairs:
        tasks = by_slug.setdefault(slug, [])
        if task not in tasks:
            tasks.append(task)
    return [{"slug": slug, "tasks": by_slug[slug]} for slug in sorted(by_slug)]


def figures(
    *,
    slug: str,
    triggers: Triggers,
    ranked: Mapping[str, Sequence[str]],
    others: Sequence[tuple[str, str]],
) -> Figures:
    """The answer's figures. ``ranked`` maps each task to the slugs Level 0 answered for it,
    best first; ``others`` are the other served skills' should-trigger tasks as (slug, task).
    Outranked on its own task: the skills above it among the first three of the answer."""
    tasks: list[TaskResult] = []
    outranked: list[tuple[str, str]] = []
    at_1 = at_3 = false = 0
    for expected, group in (
        ("trigger", triggers.should_trigger),
        ("no_trigger", triggers.should_not_trigger),
    ):
        for task in group:
            answer = list(ranked.get(task, ()))
            rank = answer.index(slug) + 1 if slug in answer else None
            tasks.append(
                {
                    "task": task,
                    "expected": expected,
                    "rank": rank,
                    "winner": answer[0] if answer else None,
                }
            )
            if expected == "trigger":
                at_1 += rank == 1
                at_3 += rank is not None and rank <= 3
                above = answer[: min(rank - 1, 3) if rank else 3]
                outranked += [(other, task) for other in above]
            else:
                false += rank == 1
    wins = [(other, task) for other, task in others if list(ranked.get(task, ()))[:1] == [slug]]
    return {
        "recall_at_1": _share(at_1, len(triggers.should_trigger)),
        "recall_at_3": _share(at_3, len(triggers.should_trigger)),
        "false_trigger_rate": _share(false, len(triggers.should_not_trigger)),
        "should_trigger": len(triggers.should_trigger),
        "hits_at_1": at_1,
        "hits_at_3": at_3,
        "should_not_trigger": len(triggers.should_not_trigger),
        "false_triggers": false,
        "tasks": tasks,
        "collisions": {"outranked_by": _grouped(outranked), "wins_from": _grouped(wins)},
    }


def outcome_check(outcome: object, note: object) -> tuple[str, str]:
    """A reported outcome and its note, or ValidationFailed naming the field."""
    if outcome not in OUTCOMES:
        raise ValidationFailed(
            f"outcome must be one of {', '.join(OUTCOMES)}.",
            details={"field": "outcome", "allowed": list(OUTCOMES)},
        )
    if note is None:
        note = ""
    if not isinstance(note, str) or len(note) > MAX_NOTE_CHARS or unstorable_reason(note):
        raise ValidationFailed(
            f"note must be text of at most {MAX_NOTE_CHARS:,} characters.",
            details={"field": "note", "limit": MAX_NOTE_CHARS},
        )
    return str(outcome), note


def success_rate(counts: Mapping[str, Any]) -> float | None:
    """The share of reported outcomes that are successes (0 to 1); None with none reported."""
    total = sum(int(counts.get(k, 0)) for k in OUTCOMES)
    return round(int(counts.get("success", 0)) / total, 4) if total else None
