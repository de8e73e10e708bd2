"""The encoder's tuning recipe (bench/finetune.py): what it reads from public skills, what it
leaves out, and how it batches — the parts that decide what the model learns without torch."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest
import yaml

from bench import finetune

FILLER = "x " * 700  # a paragraph too long to be an anchor, which carries the rest past 900
BODY = "Some words about the work at hand, long enough to count as a real body of a skill. " * 4


def _skill_md(name: str, description: str, body: str = BODY) -> bytes:
    front = yaml.safe_dump({"name": name, "description": description})
    return f"---\n{front}---\n{body}".encode()


def test_a_skill_is_read_with_its_name_description_and_body() -> None:
    skill, why = finetune.parse_skill(
        _skill_md("pdf-forms", "Fill in PDF forms from structured data, field by field.")
    )
    assert why == ""
    assert skill == {
        "name": "pdf-forms",
        "description": "Fill in PDF forms from structured data, field by field.",
        "body": BODY,
    }


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"# no frontmatter\n" + BODY.encode(), "no frontmatter"),
        (b"---\nname: [unclosed\n---\n" + BODY.encode(), "frontmatter not YAML"),
        (b"---\nname: only-a-name\n---\n" + BODY.encode(), "no name or description"),
        (
            _skill_md("x", "Ein Werkzeug für Übersetzungen ändert Größe äöü äöü äöü äöü"),
            "not English",
        ),
        (_skill_md("x", "too short"), "too short"),
        (_skill_md("x", "A description that is long enough to be kept here.", "tiny"), "too short"),
        (b"\xff\xfe" + BODY.encode(), "not UTF-8"),
    ],
)
def test_what_is_not_a_usable_skill_is_left_out_with_its_reason(content: bytes, why: str) -> None:
    assert finetune.parse_skill(content) == (None, why)


def test_anchors_are_the_when_to_use_items_and_the_later_paragraphs() -> None:
    body = (
        "# Tool\n\nIntro paragraph that the descriptor already embeds, so never an anchor.\n\n"
        "## When to use\n\n- The user wants their invoices reconciled against the bank feed\n"
        "- A month-end close is blocked on unmatched payments\n\n"
        "## Steps\n\n- Open the ledger and export the month as a CSV file first\n\n"
        + FILLER
        + "\n\nA later paragraph explaining how unmatched payments are traced back to their "
        "invoices, one by one.\n\n"
        "```\ncode blocks are never anchors, whatever their length is here\n```\n"
    )
    when, paragraphs = finetune.anchors(body)
    assert when == [
        "The user wants their invoices reconciled against the bank feed",
        "A month-end close is blocked on unmatched payments",
    ]
    assert paragraphs == [
        "A later paragraph explaining how unmatched payments are traced back to their "
        "invoices, one by one."
    ]


def test_no_batch_holds_a_skill_twice_and_no_pair_is_used_twice() -> None:
    rng = random.Random(3)
    pairs = [
        (f"anchor {i}-{k}", f"doc {i}", i) for i in range(40) for k in range(rng.randint(1, 4))
    ]
    seen: list[tuple[str, str, int]] = []
    for batch in finetune.batches(pairs, 8, random.Random(1)):
        assert 4 <= len(batch) <= 8
        assert len({p[2] for p in batch}) == len(batch)
        seen += batch
    assert len(seen) == len(set(seen))
    assert len(seen) >= len(pairs) - 8  # only a last batch under half the size is dropped


def test_a_batch_opens_with_one_skill_and_its_near_skills_then_draws_at_random() -> None:
    pairs = [(f"anchor {i}", f"doc {i}", i) for i in range(64)]
    near = [[(i + k) % 64 for k in range(1, 9)] for i in range(64)]  # each skill's next eight
    made = list(finetune.batches(pairs, 16, random.Random(5), near=near, hard=6))
    first = made[0]  # while every skill is pending: the seed, then five skills near it
    assert {p[2] for p in first[1:6]} <= set(near[first[0][2]])
    assert all(len({p[2] for p in batch}) == len(batch) for batch in made)
    assert sorted(p for batch in made for p in batch) == sorted(pairs)  # every pair, once
    plain = next(finetune.batches(pairs, 16, random.Random(5)))
    assert not {p[2] for p in plain[1:6]} <= set(near[plain[0][2]])  # without ``near``: random


def test_neighbours_are_nearest_first_and_leave_out_near_duplicates() -> None:
    import numpy as np

    angles = np.array([0.0, 0.1, 0.5, 1.0, 0.005])  # row 4 is nearly row 0
    vectors = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    near = finetune.neighbours(vectors, count=2, duplicate=0.999)
    assert near[0] == [1, 2]  # 4 is a near-duplicate of 0: left out
    assert near[3] == [2, 1]
    assert near[4] == [1, 2]
    # Asked for more than there are: every other row but the near-duplicate, never itself.
    assert finetune.neighbours(vectors, count=10, duplicate=0.999)[0] == [1, 2, 3]


def test_pairs_match_task_like_text_to_the_descriptor() -> None:
    skill = {
        "name": "reconcile",
        "description": "Reconcile invoices with payments.",
        "body": "## When to use\n\n- The bank feed and the ledger disagree at month end\n",
    }
    pairs = finetune.training_pairs([skill], random.Random(0))
    assert pairs[0] == (
        "Reconcile invoices with payments.",
        "reconcile\n\n## When to use\n\n- The bank feed and the ledger disagree at month end",
        0,
    )
    assert pairs[1][0] == "The bank feed and the ledger disagree at month end"
    assert pairs[1][1].startswith("reconcile\n\nReconcile invoices with payments.")


def _repository(path: Path, files: dict[str, bytes]) -> str:
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    work = path.parent / f"{path.name}-work"
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    for name, content in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_bytes(content)
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "skills"], check=True)
    subprocess.run([*git, "push", "-q", str(path), "HEAD:refs/heads/main"], check=True)
    return subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()


def test_the_corpus_leaves_out_the_evaluation_set_and_duplicates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evaluation = yaml.safe_load(
        (finetune.EVAL / "skills_public_getsentry.yaml").read_text(encoding="utf-8")
    )[0]
    kept = _skill_md("ledger-close", "Close the books at month end, account by account.")
    commit = _repository(
        tmp_path / "acme+skills",
        {
            "a/SKILL.md": kept,
            "b/SKILL.md": kept,  # the same skill again
            "c/SKILL.md": _skill_md(
                evaluation["name"], "Another description of a skill, long enough to keep."
            ),
            "d/SKILL.md": _skill_md("copied", evaluation["description"]),
            "getsentry/e/SKILL.md": _skill_md("other", "A skill copied from an evaluated repo."),
            "f/README.md": b"not a skill",
        },
    )
    sources = tmp_path / "sources.txt"
    sources.write_text(f"# comment\nacme/skills {commit} 10\n", encoding="utf-8")
    monkeypatch.setattr(finetune, "SOURCES", sources)
    out = tmp_path / "corpus.jsonl"
    counts = finetune.build_corpus(mirrors=tmp_path, out=out)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["name"] for r in rows] == ["ledger-close"]
    assert counts["kept from acme/skills"] == 1
    assert counts["duplicate"] == 1
    assert counts["in the evaluation set"] == 2
    assert counts["from the evaluation set's repositories"] == 1
