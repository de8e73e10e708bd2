"""bench/search_quality.py's offline fusions with a second encoder (``--mpnet``), run on a
stand-in encoder: each skill's descriptor is embedded, each query ranks by exact cosine, and
the three-way fusion puts first what all three rankings agree on. The served encoder's offline
cosines read the vectors of the set's own workspace, whatever another set holds."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench import search_quality
from bench.search_quality import Task, _bm25f_sweep, _cosines, _mpnet_cosines, _three_way
from skills_app.domain import search_text
from skills_app.encoder import embedding
from skills_app.models import RevisionEmbedding
from skills_app.selectors.search import semantic
from tests.factories import Env, actor_for, make_user, personal_ws, publish

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


def test_the_bm25f_sweep_ranks_as_served_under_each_setting_then_restores_the_served_one(
    env: Env, settings: Any
) -> None:
    """``--bm25f-sweep``: Level 0 on the tuning tasks under each length normalisation b (name,
    description, body start) and k1; a long description's words count less as its b grows."""
    settings.XMEMO_SEMANTIC_SEARCH = False  # words alone: the ranking is BM25F's
    filler = " ".join(f"filler{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(58))
    publish(env.owner, env.personal, slug="long-one", description=f"zeppelin zeppelin {filler}")
    publish(env.owner, env.personal, slug="short-one", description="zeppelin cargo")
    served = (search_text.FIELD_B, search_text.K1)
    tasks = [
        Task(query="zeppelin", expect="long-one", kind="same", split="tune"),
        Task(query="zeppelin", expect="long-one", kind="same", split="held_out"),  # never read
    ]
    rows = _bm25f_sweep(
        actor_for(env.owner), tasks, [((0.5, 0.0, 0.75), 1.2), ((0.5, 1.0, 0.75), 1.2)]
    )
    assert [round(row["MRR"], 3) for row in rows.values()] == [1.0, 0.5]
    assert list(rows) == ["b 0.50/0.00/0.75 k1 1.20", "b 0.50/1.00/0.75 k1 1.20"]
    assert served == (search_text.FIELD_B, search_text.K1)


def test_the_served_ranking_is_held_against_the_offline_fusion_on_each_metric() -> None:
    offline = {"hit@1": 0.74, "hit@3": 0.918, "MRR": 0.838}
    even = search_quality.against_offline(dict(offline), offline)
    assert even.endswith("at least as good on each")
    line = search_quality.against_offline({**offline, "MRR": 0.8369}, offline)
    assert line.endswith("BELOW on MRR")
    assert "MRR 0.837 / 0.838" in line


@pytest.mark.parametrize(
    "folder", [search_quality.EVAL, search_quality.UNSEEN, search_quality.TUNE2]
)
def test_each_evaluation_set_holds_what_its_tasks_expect_and_the_registry_accepts(
    folder: Path,
) -> None:
    """Every task's skill is in its own set, each slug once, each description within the
    format's 1,024 characters (the save refuses longer: the whole run would stop there)."""
    skills = search_quality.load_skills(folder)
    slugs = [skill["slug"] for skill in skills]
    assert len(slugs) == len(set(slugs))
    assert all(0 < len(skill["description"]) <= 1024 for skill in skills)
    tasks = search_quality.load_tasks(folder)
    assert tasks
    assert {task.expect for task in tasks} <= set(slugs)
    assert len({task.split for task in tasks}) <= 2


def test_every_sets_tuning_tasks_are_pooled_and_nothing_held_out() -> None:
    tasks = [
        Task(query="a", expect="x", kind="other", split="tune"),
        Task(query="b", expect="y", kind="other", split="held_out"),
    ]
    third = [Task(query="c", expect="z", kind="other", split="tune2")]
    table = search_quality._pooled_tuning(
        [({"Level 0": [["x"], ["q"]]}, tasks), ({"Level 0": [["q", "z"]]}, third)]
    )
    assert "(2 tasks)" in table
    assert "0.750" in table  # MRR (1 + 1/2) / 2; the held-out miss is not counted
