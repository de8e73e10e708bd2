"""Level 0 by meaning: found in other words, and only what the gate lets through.

The skills here are found by a query sharing none of their words, so only the vector path can
find them — and every rule (tenancy, ``invoke.model``, archived, team review, the feature
switch) is checked on exactly that path. The vectors are computed with the real model and
stored as the workers store them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection

from skills_app.access import Actor
from skills_app.encoder import embedding
from skills_app.models import RevisionEmbedding, Skill, SkillRevision, Workspace
from skills_app.selectors.recall import recall_search
from skills_app.selectors.search import semantic
from skills_app.selectors.search.gate import gate_for
from skills_app.services.skills import skill_set_status
from tests.factories import Env, actor_for, make_token, personal_ws, publish, save

QUERY = "my spreadsheet totals broke after I moved some columns around"
SKILL = {
    "name": "Repair Excel formula references",
    "description": "Fix #REF! errors in workbook cells after rows or sheets were rearranged.",
    "instruction_body": "Trace each damaged cell reference back to its source range.",
}


@pytest.fixture(autouse=True)
def fresh_indexes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(semantic, "CHECK_SECONDS", 0.0)
    semantic.clear_cache()
    yield
    semantic.clear_cache()


def _embed(revision: SkillRevision) -> None:
    model = embedding.encoder()
    if model is None:
        pytest.fail("The embedding model is not installed (make install installs it).")
    text = f"{revision.name}\n{revision.description}\n{revision.instruction_body}"
    _store(revision, model.encode([text])[0])


def _store(revision: SkillRevision, vector: Any) -> None:
    """``vector`` stored as the workers store a revision's embedding."""
    RevisionEmbedding.objects.create(
        revision=revision,
        model=embedding.MODEL,
        model_version=embedding.model_version(),
        dim=embedding.DIM,
        vector=embedding.vector_bytes(vector),
    )


def _slugs(actor: Actor, query: str = QUERY, **kwargs: Any) -> list[str]:
    return [
        hit["slug"] for hit in recall_search(actor=actor, query=query, **kwargs)["data"]["results"]
    ]


def _agent(env: Env, **kwargs: Any) -> Actor:
    token, _ = make_token(env.owner, **kwargs)
    return Actor(user=env.owner, token=token, via="api")


def _publish_embedded(user: Any, workspace: Workspace, slug: str, **overrides: Any) -> Skill:
    revision = publish(user, workspace, slug=slug, **{**SKILL, **overrides}).revision
    _embed(revision)
    return Skill.objects.get(pk=revision.skill_id)


def test_other_words_find_the_skill_only_by_meaning(env: Env) -> None:
    _publish_embedded(env.owner, env.personal, "excel-refs")
    publish(env.owner, env.personal, slug="bread", name="Bake bread", description="Sourdough.")
    agent = _agent(env)
    assert _slugs(agent) == ["excel-refs"]
    [hit] = recall_search(actor=agent, query=QUERY)["data"]["results"]
    assert isinstance(hit["score"], float)
    assert hit["score"] > 0
    # Without the model the same query finds nothing: no word is shared.
    RevisionEmbedding.objects.all().delete()
    semantic.clear_cache()
    assert _slugs(agent) == []


def test_meaning_never_crosses_tenants(env: Env) -> None:
    _publish_embedded(env.outsider, personal_ws(env.outsider), "foreign-refs")
    _publish_embedded(env.owner, env.team, "team-refs")
    assert _slugs(actor_for(env.owner)) == ["team-refs"]
    assert _slugs(actor_for(env.member)) == ["team-refs"]
    assert _slugs(actor_for(env.outsider)) == ["foreign-refs"]
    # A token restricted to the personal workspace does not see the team's skill.
    assert _slugs(_agent(env, workspace=env.personal)) == []
    # Nor does a search scoped to the personal workspace.
    assert _slugs(actor_for(env.owner), workspace=env.personal.slug) == []


def test_meaning_keeps_people_only_skills_from_agents(env: Env) -> None:
    _publish_embedded(
        env.owner, env.personal, "human-refs", frontmatter={"invoke": {"model": False}}
    )
    assert _slugs(_agent(env)) == []
    assert _slugs(actor_for(env.owner, via="console")) == ["human-refs"]


def test_meaning_leaves_archived_skills_out(env: Env) -> None:
    skill = _publish_embedded(env.owner, env.personal, "old-refs")
    assert _slugs(_agent(env)) == ["old-refs"]
    skill_set_status(actor=actor_for(env.owner), skill=skill, status="archived")
    assert _slugs(_agent(env)) == []


def test_meaning_never_shows_unreviewed_team_text(env: Env) -> None:
    # A team skill with only a proposed revision: embedded, yet never found.
    proposed = save(env.member, env.team, slug="new-refs", intent="publish", **SKILL).revision
    assert proposed.state == "proposed"
    _embed(proposed)
    assert _slugs(actor_for(env.member)) == []
    # Published v1 about bread, proposed v2 about spreadsheets (embedded): v2's meaning must not
    # lead to the skill while v1 is what agents get.
    v1 = publish(env.owner, env.team, slug="swap", name="Bake bread", description="Sourdough.")
    _embed(v1.revision)
    v2 = save(env.member, env.team, slug="swap", intent="publish", **SKILL).revision
    assert v2.state == "proposed"
    _embed(v2)
    assert "swap" not in _slugs(actor_for(env.member))


def test_meaning_respects_the_feature_switch(env: Env) -> None:
    _publish_embedded(env.owner, env.team, "team-refs")
    _publish_embedded(env.owner, env.personal, "own-refs")
    Workspace.objects.filter(pk=env.team.pk).update(cloud_skills_enabled=False)
    assert _slugs(actor_for(env.owner)) == ["own-refs"]


@pytest.mark.parametrize("limit", [10, 1])
def test_whatever_the_vector_path_proposes_passes_the_gate(
    env: Env, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    """A stale or wrong vector index can cost a hit, never leak one. With ``limit=1`` the
    descriptors of the best two proposals are fetched first: both fail the gate, and the one
    that passes is still found further down."""
    foreign = _publish_embedded(env.outsider, personal_ws(env.outsider), "foreign-refs")
    archived = _publish_embedded(env.owner, env.personal, "archived-refs")
    skill_set_status(actor=actor_for(env.owner), skill=archived, status="archived")
    human = _publish_embedded(
        env.owner, env.personal, "human-refs", frontmatter={"invoke": {"model": False}}
    )
    draft_only = save(env.member, env.team, slug="draft-refs", **SKILL).revision
    mine = _publish_embedded(env.owner, env.personal, "mine-refs")
    proposals = [foreign.pk, archived.pk, human.pk, draft_only.skill_id, mine.pk]
    monkeypatch.setattr(
        semantic, "rank", lambda **_: [(pk, 0.9 - i / 100) for i, pk in enumerate(proposals)]
    )
    assert _slugs(_agent(env), limit=limit) == ["mine-refs"]


def test_a_new_revision_moves_the_skill_in_meaning(env: Env) -> None:
    skill = _publish_embedded(
        env.owner,
        env.personal,
        "kitchen",
        name="Bake bread",
        description="Sourdough starter and oven.",
        instruction_body="Knead.",
    )
    agent = _agent(env)
    assert _slugs(agent) == []
    assert _slugs(agent, query="how do I make a loaf at home") == ["kitchen"]
    revision = publish(env.owner, env.personal, slug="kitchen", **SKILL).revision
    assert revision.skill_id == skill.pk
    _embed(revision)
    assert _slugs(agent) == ["kitchen"]
    assert _slugs(agent, query="how do I make a loaf at home") == []


def test_large_workspaces_use_an_inverted_file_index(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the per-process index is PostgreSQL's path")
    monkeypatch.setattr(semantic, "EXACT_LIMIT", 1)
    _publish_embedded(env.owner, env.personal, "excel-refs")
    bread = publish(env.owner, env.personal, slug="bread", name="Bake bread", description="Rye.")
    _embed(bread.revision)
    assert _slugs(_agent(env))[:1] == ["excel-refs"]
    gate = gate_for(actor=_agent(env), workspace=None)
    assert type(semantic._CACHE.index(env.personal.pk, gate).index).__name__ == "IndexIVFFlat"


def test_an_inverted_file_index_trains_on_a_bounded_sample() -> None:
    import numpy as np

    vectors = np.random.default_rng(1).random((5000, 8), dtype=np.float32)
    lists = 10
    sample = semantic.training_sample(vectors, lists)
    assert len(sample) == semantic.TRAIN_PER_LIST * lists
    assert {row.tobytes() for row in sample} <= {row.tobytes() for row in vectors}
    assert len({row.tobytes() for row in sample}) == len(sample)  # no vector twice
    assert np.array_equal(sample, semantic.training_sample(vectors, lists))  # repeatable
    few = vectors[: semantic.TRAIN_PER_LIST * lists - 1]
    assert semantic.training_sample(few, lists) is few


def _at_cosine(revision: SkillRevision, cosine: float, axis: int) -> None:
    """Store a vector whose cosine with the unit query ``e0`` is exactly ``cosine``."""
    import numpy as np

    vector = np.zeros(embedding.DIM, dtype=np.float32)
    vector[0], vector[axis] = cosine, (1.0 - cosine**2) ** 0.5
    _store(revision, vector)


def test_level0_fuses_the_nearest_skills_whatever_their_cosine_but_answers_only_related_ones(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The meaning side's standard scores are taken over the 50 nearest skills, as an offline
    fusion of the same parts takes them, not over those above ``MIN_SIMILARITY`` only (a cut
    list made small margins large); a skill only meaning proposes, under that cosine, is still
    not in the answer."""
    import numpy as np

    from skills_app.selectors.search import fuse_by_score, search_skills

    query = np.zeros(embedding.DIM, dtype=np.float32)
    query[0] = 1.0
    monkeypatch.setattr(semantic, "query_vector", lambda text: query)
    cosines = {
        "zeppelin-charter": 0.15,  # every word, little meaning
        "airship-routes": 0.5,  # one word in its body
        "balloon-safety": 0.3,  # no word
        "bread": 0.1,  # nothing: never answered
        "knitting": 0.05,
    }
    bodies = {"airship-routes": "Plan routes; a zeppelin may fly them too."}
    for axis, (slug, cosine) in enumerate(cosines.items(), start=1):
        revision = publish(
            env.owner,
            env.personal,
            slug=slug,
            name=slug.replace("-", " ").title(),
            description=f"About {slug.split('-')[0]}.",
            instruction_body=bodies.get(slug, "Steps."),
        ).revision
        _at_cosine(revision, cosine, axis)
    pk = dict(Skill.objects.values_list("slug", "pk"))
    words: list[list[tuple[int, float]]] = []

    def words_alone(by_words: Any, by_meaning: Any, pool: int) -> Any:
        words.append(by_words)
        return by_words

    text = "zeppelin charter"
    search_skills(
        actor=actor_for(env.owner), text=text, workspace=None, limit=10, fusion=words_alone
    )
    nearest = sorted(((pk[s], c) for s, c in cosines.items()), key=lambda pair: -pair[1])
    proposed = {p for p, _ in words[0]} | {p for p, c in nearest if c >= semantic.MIN_SIMILARITY}
    offline = [(p, s) for p, s in fuse_by_score(words[0], nearest, 50) if p in proposed]
    served = recall_search(actor=actor_for(env.owner), query=text)["data"]["results"]
    assert [hit["skill_id"] for hit in served] == [
        str(Skill.objects.get(pk=p).skill_id) for p, _ in offline
    ]
    assert [hit["score"] for hit in served] == [pytest.approx(s, abs=1e-6) for _, s in offline]
    assert {hit["slug"] for hit in served} == {
        "zeppelin-charter",
        "airship-routes",
        "balloon-safety",
    }
