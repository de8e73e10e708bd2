"""The diff of two revisions is bounded in time and cached (docs/contract.md §10, §16b): one
time budget covers every text of a revision pair, a pair that exhausts it answers a coarser
diff flagged ``truncated``, and a pair already diffed is not diffed again."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest
from diff_match_patch import diff_match_patch

from skills_app.domain import diff
from skills_app.domain.diff import ComponentSnapshot, RevisionSnapshot, diff_snapshots
from skills_app.domain.shapes.diff import RevisionPairDiff, SkillDiff
from skills_app.infra.cache import clear_local
from skills_app.selectors import skills as skill_selectors
from tests.factories import Env, actor_for, component, save


def _shuffled_pair(size: int = 65_536) -> tuple[str, str]:
    """The pathological pair: the same words, shuffled (no long common run to anchor on)."""
    rng = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choices(letters, k=rng.randint(2, 9))) for _ in range(4000)]
    text = " ".join(rng.choice(words) for _ in range(size // 6))[:size]
    tokens = text.split(" ")
    return text, " ".join(rng.sample(tokens, len(tokens)))


def _snapshot(revision_id: str, body: str, texts: dict[str, str]) -> RevisionSnapshot:
    return RevisionSnapshot(
        revision_id=revision_id,
        revision_number=1,
        name="n",
        description="d",
        frontmatter={},
        instruction_body=body,
        components={
            path: ComponentSnapshot(type="reference", sha256=str(hash(t)), size=len(t), text=t)
            for path, t in texts.items()
        },
    )


def test_every_text_of_a_revision_pair_shares_one_time_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    deadlines: list[float] = []
    real = diff_match_patch.diff_main

    def spy(self: Any, a: str, b: str, checklines: bool = True, deadline: Any = None) -> Any:
        deadlines.append(deadline)
        return real(self, a, b, checklines, deadline)

    monkeypatch.setattr(diff_match_patch, "diff_main", spy)
    started = time.time()
    diff_snapshots(
        _snapshot("a", "one two", {f"r{i}.md": f"old {i}" for i in range(5)}),
        _snapshot("b", "one three", {f"r{i}.md": f"new {i}" for i in range(5)}),
    )
    assert len(deadlines) >= 6  # the body and five components
    assert diff.DIFF_BUDGET_SECONDS <= 1.0
    # One deadline for the whole pair, not a fresh timeout per text.
    assert len(set(deadlines)) == 1
    assert started <= deadlines[0] <= time.time() + diff.DIFF_BUDGET_SECONDS


def test_a_pair_that_exhausts_the_budget_answers_a_coarse_diff_flagged_truncated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    a, b = _shuffled_pair()
    small = diff_snapshots(_snapshot("a", "one two", {}), _snapshot("b", "one three", {}))
    assert small["truncated"] is False
    monkeypatch.setattr(diff, "DIFF_BUDGET_SECONDS", 0.0)  # what a slow pair leaves of it
    result = diff_snapshots(_snapshot("a", a, {"r.md": b}), _snapshot("b", b, {"r.md": a}))
    assert result["truncated"] is True
    body = result["instruction_body"]
    # Still a valid diff: the deletions and equal runs spell the old text, the insertions the new.
    assert "".join(op["text"] for op in body if op["op"] != "insert") == a
    assert "".join(op["text"] for op in body if op["op"] != "delete") == b
    assert len(body) <= 3


def test_a_second_request_for_the_same_pair_does_not_recompute(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = save(env.owner, env.personal, instruction_body="v1 words here").revision
    second = save(
        env.owner,
        env.personal,
        instruction_body="v2 words there",
        components=(component("r.md", "ref"),),
    ).revision
    calls: list[str] = []
    real = diff_snapshots

    def counting(old: RevisionSnapshot, new: RevisionSnapshot) -> RevisionPairDiff:
        calls.append(new.revision_id)
        return real(old, new)

    monkeypatch.setattr(skill_selectors, "diff_snapshots", counting)

    def ask() -> SkillDiff:
        return skill_selectors.skill_diff(
            actor=actor_for(env.owner),
            skill_id=first.skill.skill_id,
            from_revision_id=first.revision_id,
            to_revision_id=second.revision_id,
        )

    answer = ask()
    assert ask() == answer  # the process's cache
    clear_local()
    assert ask() == answer  # the shared cache
    assert calls == [second.revision_id]
    assert answer["truncated"] is False
    assert answer["skill_id"] == first.skill.skill_id
    # The reverse pair is another diff.
    skill_selectors.skill_diff(
        actor=actor_for(env.owner),
        skill_id=first.skill.skill_id,
        from_revision_id=second.revision_id,
        to_revision_id=first.revision_id,
    )
    assert calls == [second.revision_id, first.revision_id]
