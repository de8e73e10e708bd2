"""bench/search_quality.py's offline fusions with a second encoder (``--mpnet``), run on a
stand-in encoder: each skill's descriptor is embedded, each query ranks by exact cosine, and
the three-way fusion puts first what all three rankings agree on. The served encoder's offline
cosines read the vectors of the set's own workspace, whatever another set holds."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from bench import search_quality
from bench.search_quality import Task, _cosines, _mpnet_cosines, _three_way
from skills_app.encoder import embedding
from skills_app.models import RevisionEmbedding
from skills_app.selectors.search import semantic
from tests.factories import Env, make_user, personal_ws, publish

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


def _stored(revision_id: int, axis: int) -> None:
    vector = np.zeros(embedding.DIM, dtype=np.float32)
    vector[axis] = 1.0
    RevisionEmbedding.objects.create(
        revision_id=revision_id,
        model=embedding.MODEL,
        model_version="test",
        dim=embedding.DIM,
        vector=embedding.vector_bytes(vector),
    )


def test_offline_cosines_read_the_sets_own_workspace_where_another_holds_the_same_slug(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both evaluation sets hold ``frontend-design``, ``gh-fix-ci`` and ``gh-address-comments``:
    each set's offline cosine is its own skill's, not whichever row the database read last."""
    other = make_user()
    _stored(publish(env.owner, env.personal, slug="twin").revision.pk, axis=0)
    _stored(publish(env.owner, env.personal, slug="plain").revision.pk, axis=1)
    _stored(publish(other, personal_ws(other), slug="twin").revision.pk, axis=2)  # read last
    query = np.zeros(embedding.DIM, dtype=np.float32)
    query[0] = 1.0
    monkeypatch.setattr(semantic, "query_vector", lambda text: query)
    skills = [{"slug": "twin"}, {"slug": "plain"}]
    task = Task(query="q", expect="twin", kind="other", split="unseen")
    [hits] = _cosines(skills, [task], env.personal.slug)
    assert hits == [(0, pytest.approx(1.0)), (1, pytest.approx(0.0))]
