"""bench/search_quality.py's offline fusions with a second encoder (``--mpnet``), run on a
stand-in encoder: each skill's descriptor is embedded, each query ranks by exact cosine, and
the three-way fusion puts first what all three rankings agree on."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from bench import search_quality
from bench.search_quality import Task, _mpnet_cosines, _three_way

WORDS = ("deploy", "invoice", "triage")


class _Keywords:
    """An encoder whose vector says which of ``WORDS`` a text holds."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.seen += texts
        rows = [[float(word in text.lower()) + 0.01 for word in WORDS] for text in texts]
        vectors = np.array(rows, dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_mpnet_ranks_each_task_by_the_cosine_of_the_skills_descriptors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    documents, queries = _Keywords(), _Keywords()
    monkeypatch.setattr(search_quality, "_mpnet", lambda _: (documents, queries))
    skills = [
        {"slug": f"s{i}", "name": f"Skill {i}", "description": f"Use to {word}", "body": "text"}
        for i, word in enumerate(WORDS)
    ]
    tasks = [Task(query=f"how do I {w}", expect="", kind="same", split="tune") for w in WORDS]
    ranked = _mpnet_cosines(Path("unused"), skills, tasks)
    assert [hits[0][0] for hits in ranked] == [0, 1, 2]
    assert all(hits[0][1] > hits[1][1] for hits in ranked)
    assert documents.seen[0].startswith("Skill 0\n\nUse to deploy")  # the descriptor's text
    assert queries.seen == [t.query for t in tasks]


def test_the_three_way_fusion_puts_first_what_every_ranking_agrees_on() -> None:
    words = [(1, 4.0), (2, 3.5), (3, 1.0)]
    minilm = [(2, 0.7), (1, 0.6), (3, 0.2)]
    mpnet = [(2, 0.8), (3, 0.4), (1, 0.3)]
    assert [pk for pk, _ in _three_way(words, minilm, mpnet)] == [2, 1, 3]
    # The encoders weigh alike: swapping them changes nothing.
    swapped = _three_way(words, mpnet, minilm)
    assert [pk for pk, _ in swapped] == [2, 1, 3]
    assert [score for _, score in swapped] == pytest.approx(
        [score for _, score in _three_way(words, minilm, mpnet)]
    )
