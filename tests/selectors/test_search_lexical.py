"""Level 0 by words: whole words weighed by rarity, name above description above body, typos
forgiven, and the per-workspace vocabulary that weighs them (PostgreSQL)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection, connections

from skills_app.access import Actor
from skills_app.models import Skill
from skills_app.selectors.recall import recall_search
from skills_app.selectors.search import semantic
from skills_app.services.skills import skill_delete, skill_set_status
from tests.factories import Env, actor_for, make_token, make_user, personal_ws, publish, save
from tests.support import require_service


@pytest.fixture(autouse=True)
def words_only(settings: object) -> Iterator[None]:
    """These tests are about the word ranking alone."""
    settings.XMEMO_SEMANTIC_SEARCH = False  # type: ignore[attr-defined]
    from skills_app.encoder import embedding

    embedding.reset_for_tests()
    semantic.clear_cache()
    yield
    embedding.reset_for_tests()


def _slugs(actor: Actor, query: str) -> list[str]:
    return [hit["slug"] for hit in recall_search(actor=actor, query=query)["data"]["results"]]


def _df(workspace_id: int, lexeme: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(sum(df), 0) FROM skills_app_searchterm"
            " WHERE workspace_id = %s AND lexeme = %s",
            [workspace_id, lexeme],
        )
        return int(cursor.fetchone()[0])


@pytest.fixture
def pg() -> None:
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")


def test_rare_words_outweigh_common_ones(env: Env, pg: None) -> None:
    for i in range(6):
        publish(
            env.owner,
            env.personal,
            slug=f"deploy-{i}",
            name=f"Deploy service {i}",
            description="Deploy a service.",
            instruction_body="Deploy it.",
        )
    publish(
        env.owner,
        env.personal,
        slug="canary",
        name="Canary checks",
        description="Watch a canary.",
        instruction_body="Compare error rates.",
    )
    # "deploy" is in seven skills, "canary" in one: the canary skill wins though it lacks
    # the common word.
    assert _slugs(actor_for(env.owner), "deploy canary")[0] == "canary"


def test_words_match_whole_not_as_prefixes_inside_a_sentence(env: Env, pg: None) -> None:
    publish(
        env.owner,
        env.personal,
        slug="apple",
        name="Apple developer account",
        description="Renew the Apple membership.",
    )
    publish(
        env.owner,
        env.personal,
        slug="app-store",
        name="App release",
        description="Ship the app to the store.",
    )
    actor = actor_for(env.owner)
    assert _slugs(actor, "release my app today") == ["app-store"]
    # Still being typed: the last word is a prefix.
    assert set(_slugs(actor, "appl")) == {"apple"}


def test_name_outranks_description_outranks_body(env: Env, pg: None) -> None:
    publish(
        env.owner,
        env.personal,
        slug="in-body",
        name="Alpha",
        description="First.",
        instruction_body="Mentions the zeppelin once.",
    )
    publish(
        env.owner,
        env.personal,
        slug="in-description",
        name="Beta",
        description="About a zeppelin.",
        instruction_body="Nothing.",
    )
    publish(
        env.owner,
        env.personal,
        slug="in-name",
        name="Zeppelin",
        description="Third.",
        instruction_body="Nothing.",
    )
    assert _slugs(actor_for(env.owner), "zeppelin") == ["in-name", "in-description", "in-body"]


def test_a_misspelled_word_finds_the_word_it_meant(env: Env, pg: None) -> None:
    publish(
        env.owner,
        env.personal,
        slug="k8s",
        name="Kubernetes rollout",
        description="Roll out a deployment.",
    )
    publish(
        env.owner,
        env.personal,
        slug="other",
        name="Terraform plan",
        description="Plan infrastructure.",
    )
    assert _slugs(actor_for(env.owner), "kubernets rolout") == ["k8s"]
    # A short unknown word is not guessed at.
    assert _slugs(actor_for(env.owner), "kub") == ["k8s"]  # but it is a prefix being typed
    assert _slugs(actor_for(env.owner), "xq ") == []


def test_the_vocabulary_counts_searchable_skills_per_workspace(env: Env, pg: None) -> None:
    actor = actor_for(env.owner)
    publish(env.owner, env.personal, slug="one", name="Quasar survey", description="Stars.")
    publish(env.owner, env.personal, slug="two", name="Quasar map", description="Sky.")
    publish(env.owner, env.team, slug="three", name="Quasar notes", description="Space.")
    ws = env.personal.pk
    assert _df(ws, "quasar") == 2
    assert _df(ws, "") == 2  # the skills themselves
    assert _df(env.team.pk, "quasar") == 1
    # A new revision without the word: counted once less.
    publish(env.owner, env.personal, slug="two", name="Star map", description="Sky.")
    assert _df(ws, "quasar") == 1
    assert _df(ws, "") == 2
    # Archived skills are not searchable: not counted; unarchived: counted again.
    skill = Skill.objects.get(workspace=env.personal, slug="one")
    skill_set_status(actor=actor, skill=skill, status="archived")
    assert _df(ws, "quasar") == 0
    assert _df(ws, "") == 1
    skill_set_status(actor=actor, skill=skill, status="active")
    assert _df(ws, "quasar") == 1
    skill_set_status(actor=actor, skill=skill, status="archived")
    skill_delete(actor=actor, skill=skill)
    assert _df(ws, "quasar") == 0
    # Rarity is counted over what the caller reads: another tenant's words weigh nothing.
    stranger = make_user()
    for i in range(5):
        publish(stranger, personal_ws(stranger), slug=f"s{i}", name="Quasar", description="x")
    assert _df(env.personal.pk, "quasar") == 0


@pytest.mark.django_db(transaction=True)
def test_concurrent_saves_sharing_words_never_deadlock(pg: None) -> None:
    from tests.factories import build_env

    env = build_env()
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def writer(n: int) -> None:
        try:
            barrier.wait()
            for i in range(6):
                # Overlapping words in different orders, old and new words both shared.
                words = ["alpha", "beta", "gamma", "delta", "omega"][(n + i) % 5 :]
                save(
                    env.owner,
                    env.personal,
                    slug=f"w{n}",
                    name=" ".join(words) or "x",
                    description=" ".join(reversed(words)) or "y",
                    intent="publish",
                )
        except BaseException as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert _df(env.personal.pk, "") == 4


def test_agents_token_search_counts_only_readable_rarity(env: Env, pg: None) -> None:
    token, _ = make_token(env.owner, workspace=env.personal)
    agent = Actor(user=env.owner, token=token, via="api")
    publish(env.owner, env.personal, slug="mine", name="Quasar survey", description="Stars.")
    save(env.member, env.team, slug="team-draft", name="Quasar draft", description="x")
    assert _slugs(agent, "quasar") == ["mine"]


def test_matches_read_are_bounded_in_total_rarest_words_first(
    env: Env, pg: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every match of a rare word is read, but the words of one query together read at most
    MATCH_BUDGET matches, the rarest words first: twelve words each just under a per-word cap
    would otherwise read twelve times the cap. A word past the budget still counts for the
    skills that hold every word, and for the candidates found through the others."""
    from skills_app.selectors.search import lexical

    monkeypatch.setattr(lexical, "MATCH_BUDGET", 5)
    for word in ("alpha", "beta"):
        for i in range(4):
            publish(
                env.owner, env.personal, slug=f"{word}-{i}", name=f"{word} {i}", description="x"
            )
    publish(env.owner, env.personal, slug="gamma-only", name="gamma", description="x")
    publish(env.owner, env.personal, slug="all-three", name="gamma alpha beta", description="x")
    found = _slugs(actor_for(env.owner), "alpha beta gamma")
    # gamma (2 matches) fits the budget; alpha and beta (5 each) would take it past 5.
    assert found[0] == "all-three"
    assert sorted(found) == ["all-three", "gamma-only"]


def test_when_more_skills_hold_every_word_than_are_ranked_the_named_ones_are_kept(
    env: Env, pg: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the CANDIDATES best by the words they hold are ranked. Skills holding every word tie
    on that, so the cut keeps those whose name or description holds a word before the others,
    not whichever the database happened to list first."""
    from skills_app.selectors.search import lexical

    monkeypatch.setattr(lexical, "CANDIDATES", 3)
    body = "Rotate the signing keystore before it expires."
    memo = {"description": "An internal memo.", "instruction_body": body}
    for i in range(30):
        publish(env.owner, env.personal, slug=f"memo-{i}", name=f"Memo {i}", **memo)
    publish(
        env.owner,
        env.personal,
        slug="keystore-rotation",
        name="Keystore rotation",
        description="Renew the certificate store.",
        instruction_body=body,
    )
    assert _slugs(actor_for(env.owner), "rotate signing keystore")[0] == "keystore-rotation"


def test_words_held_by_more_skills_than_are_read_are_looked_for_in_names_first(
    env: Env, pg: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When more skills hold every word than EVERY_WORD_BUDGET reads (one common word at
    100,000 skills: 16,000), the candidates are the skills whose name or description holds them
    all, found through that smaller index, not whichever the word index listed first: the
    skills that name a word lead its ranking, and those were missed when the first matches
    read held it in their bodies only."""
    from skills_app.selectors.search import lexical

    for budget in ("MATCH_BUDGET", "EVERY_WORD_BUDGET", "CANDIDATES"):
        monkeypatch.setattr(lexical, budget, 3)
    for i in range(6):  # saved first, so listed first by the word index
        publish(
            env.owner,
            env.personal,
            slug=f"hangar-{i}",
            name=f"Hangar {i}",
            description="Keep the hangar tidy.",
            instruction_body="The zeppelin is moored here.",
        )
    for i in range(3):
        publish(
            env.owner,
            env.personal,
            slug=f"zeppelin-{i}",
            name=f"Zeppelin {i}",
            description="Fly it.",
            instruction_body="Check the gas cells.",
        )
    found = _slugs(actor_for(env.owner), "zeppelin")
    assert sorted(found[:3]) == ["zeppelin-0", "zeppelin-1", "zeppelin-2"]


def _word_matches_read(plan: dict[str, Any]) -> int:
    """Rows an EXPLAIN (ANALYZE, FORMAT JSON) plan read from the skills table by a word test."""
    conditions = " ".join(str(plan.get(key, "")) for key in ("Recheck Cond", "Filter"))
    read = 0
    if plan.get("Relation Name") == "skills_app_skill" and "search_" in conditions:
        read = plan["Actual Rows"] * plan["Actual Loops"]
    return read + sum(_word_matches_read(child) for child in plan.get("Plans", []))


def _search_explained(actor: Actor, query: str, *, analyze: bool) -> tuple[list[str], Any]:
    """Level 0's answer to ``query``, and the plan of its word statement (EXPLAIN, FORMAT JSON;
    with ``analyze``, as it ran)."""
    from skills_app.infra import db

    statements: list[tuple[str, list[Any]]] = []
    fetch_all = db.fetch_all

    def recording(sql: str, params: list[Any], **kwargs: bool) -> list[tuple[Any, ...]]:
        statements.append((sql, params))
        return fetch_all(sql, params, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(db, "fetch_all", recording)
        found = _slugs(actor, query)
    rank_sql, params = next((sql, p) for sql, p in statements if " hits AS " in sql)
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN ({'ANALYZE, ' if analyze else ''}FORMAT JSON) {rank_sql}", params)
        (explained,) = cursor.fetchone()
    plan = explained if isinstance(explained, list) else json.loads(explained)
    return found, plan[0]["Plan"]


def test_when_enough_skills_name_every_word_no_other_match_is_read(
    env: Env, pg: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A word under MATCH_BUDGET but held by more skills than EVERY_WORD_BUDGET (one topic word
    at 10,000 skills: 1,700 of them) had all its matches read, each one's name and description
    tested, when the skills naming it already filled the candidates: 7 of the 9 ms the word
    ranking took (``make bench``, common words at 10,000, p95 over 20 ms). Those others could
    only tie with the named ones, and ties keep the named first: they are not read."""
    from skills_app.selectors.search import lexical

    monkeypatch.setattr(lexical, "MATCH_BUDGET", 100)
    for budget in ("EVERY_WORD_BUDGET", "CANDIDATES"):
        monkeypatch.setattr(lexical, budget, 3)
    for i in range(6):
        publish(
            env.owner,
            env.personal,
            slug=f"hangar-{i}",
            name=f"Hangar {i}",
            instruction_body="The zeppelin is moored here.",
        )
    for i in range(3):
        publish(env.owner, env.personal, slug=f"zeppelin-{i}", name=f"Zeppelin {i}")
    found, plan = _search_explained(actor_for(env.owner), "zeppelin", analyze=True)
    assert sorted(found[:3]) == ["zeppelin-0", "zeppelin-1", "zeppelin-2"]
    assert _word_matches_read(plan) == 3


def test_when_enough_skills_hold_every_word_the_rare_words_other_matches_are_not_read(
    env: Env, pg: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A skill holding some of the words scores less than any holding them all, so when these
    fill the candidates the rare words' other matches are not read: two topic words at 10,000
    skills read all 1,700 of one word's matches, 2.5 of the statement's 4.8 ms, to rank 270
    skills holding both."""
    from skills_app.selectors.search import lexical

    monkeypatch.setattr(lexical, "MATCH_BUDGET", 100)
    monkeypatch.setattr(lexical, "EVERY_WORD_BUDGET", 100)
    monkeypatch.setattr(lexical, "CANDIDATES", 3)
    for i in range(6):
        publish(env.owner, env.personal, slug=f"only-{i}", name=f"Zeppelin {i}")
    for i in range(4):
        publish(
            env.owner,
            env.personal,
            slug=f"both-{i}",
            name=f"Airship {i}",
            instruction_body="The zeppelin is moored in the hangar.",
        )
    found, plan = _search_explained(actor_for(env.owner), "zeppelin hangar", analyze=True)
    assert len(found) == 3
    assert {slug[:5] for slug in found} == {"both-"}
    assert _word_matches_read(plan) == 4


def _plan_shape(plan: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Each node of an EXPLAIN (FORMAT JSON) plan: its kind, table and estimated rows."""
    shape = [(plan["Node Type"], plan.get("Relation Name"), plan["Plan Rows"])]
    for child in plan.get("Plans", []):
        shape += _plan_shape(child)
    return shape


def test_a_common_word_is_planned_like_a_rare_one(
    env: Env, pg: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A query of one common word ("docker") asks for the first EVERY_WORD_BUDGET skills holding
    it. Told how common the word was, the planner read the skills table from its start instead
    of the word index, testing each row's large word vector until enough matched: at 100,000
    skills 110-150 ms where the index answers in 10 (``make bench``, common words). The
    statement keeps the words from the planner: the plan is the same whatever the word, and at
    scale it is the index's."""
    from skills_app.selectors.search import lexical

    monkeypatch.setattr(lexical, "MATCH_BUDGET", 5)
    monkeypatch.setattr(lexical, "EVERY_WORD_BUDGET", 5)
    body = "Build the zeppelin image and push it to the registry. " * 15
    publish(env.owner, env.personal, slug="z-0", name="Image", instruction_body=body)
    publish(env.owner, env.personal, slug="q", name="Quasar", instruction_body="A quasar.")
    with connection.cursor() as cursor:  # 300 more skills like z-0, made in one statement
        columns = (
            "status, revision_count, search_name, search_description, search_body, search_terms,"
            " search_lexemes, model_invocable, user_invocable, created_at, updated_at,"
            " current_revision_id, latest_revision_id, published_revision_id, workspace_id"
        )
        cursor.execute(
            f"INSERT INTO skills_app_skill (skill_id, slug, {columns})"
            f" SELECT 'skill_copy' || g, 'z-' || g, {columns}"
            " FROM skills_app_skill, generate_series(1, 300) g WHERE slug = 'z-0'"
        )
        cursor.execute("ANALYZE skills_app_skill")
    shapes = []
    for word, found in (("zeppelin", 5), ("quasar", 1)):  # 5: the EVERY_WORD_BUDGET of 301
        slugs, plan = _search_explained(actor_for(env.owner), word, analyze=False)
        assert len(slugs) == found
        shapes.append(_plan_shape(plan))
    assert shapes[0] == shapes[1]


def test_rarity_is_counted_among_every_readable_skill_on_either_database(env: Env) -> None:
    """docs/search.md: a word weighs its IDF among the skills the caller may read — on SQLite
    (the embedded default) as on PostgreSQL, not among the skills that hold a query word."""
    from skills_app.domain.search_text import bm25f, idf, query_words
    from skills_app.selectors.search import lexical
    from skills_app.selectors.search.gate import gate_for

    for i in range(8):
        publish(env.owner, env.personal, slug=f"plain-{i}", name=f"Plain {i}", description="x")
    for i in range(2):
        publish(
            env.owner,
            env.personal,
            slug=f"striped-{i}",
            name=f"Horse {i}",
            description="y",
            instruction_body="A zebra walks by.",
        )
    # Skills the caller cannot read weigh nothing, whatever they hold.
    for i in range(5):
        publish(
            env.outsider,
            personal_ws(env.outsider),
            slug=f"theirs-{i}",
            name=f"Other {i}",
            description="A zebra elsewhere.",
        )
    token, _ = make_token(env.owner, workspace=env.personal)
    gate = gate_for(actor=Actor(user=env.owner, token=token, via="api"), workspace=None)
    ranked = lexical.rank(gate=gate, words=query_words("zebra"), slug_guess="zebra", limit=10)
    # Ten readable skills, two holding the word: its IDF is that of 2 in 10, whatever its count.
    body_once = bm25f([[0, 0, 1]], Skill.objects.get(slug="striped-0").search_terms["l"], [1.0])
    assert [round(score, 9) for _, score in ranked] == [
        round(idf(documents=10, containing=2) * body_once, 9)
    ] * 2


def test_a_stem_the_query_says_twice_weighs_twice_on_either_database(env: Env) -> None:
    """BM25 sums over the query's words: "errors" and "error" are two of them, so the stem they
    share weighs twice its IDF, as in the textbook (and the bench's offline BM25)."""
    from skills_app.domain.search_text import query_words
    from skills_app.selectors.search import lexical
    from skills_app.selectors.search.gate import gate_for

    # The same lengths and rarity: said once each, the two would tie (the older first).
    publish(env.owner, env.personal, slug="first", name="Alpha", description="Read the stack.")
    publish(env.owner, env.personal, slug="second", name="Beta", description="Read the error.")
    publish(env.owner, env.personal, slug="third", name="Gamma", description="Read the logs.")
    gate = gate_for(actor=actor_for(env.owner), workspace=None)
    words = query_words("stack traces and errors: the error tracker")
    ranked = lexical.rank(gate=gate, words=words, slug_guess="", limit=10)
    slugs = dict(Skill.objects.values_list("pk", "slug"))
    assert [slugs[pk] for pk, _ in ranked] == ["second", "first"]
    assert ranked[0][1] == pytest.approx(2 * ranked[1][1])


def test_the_embedded_defaults_typo_similarity_is_pg_trgms(pg: None, db: None) -> None:
    """SQLite has no pg_trgm: ``trigram_similarity`` stands in for its ``similarity``, and a
    typo must pick the same word on both databases."""
    from skills_app.domain.search_text import trigram_similarity, trigrams

    words = ["kubernet", "kubernetes", "rollout", "rolout", "summari", "summaris", "aaaa", "aa"]
    words += ["café", "cafe", "deploy", "deploi", "x1", "v2", "straße", "strasse", "k8s"]
    with connection.cursor() as cursor:
        for a in words:
            for b in words:
                cursor.execute("SELECT similarity(%s, %s)", [a, b])
                expected = cursor.fetchone()[0]
                assert trigram_similarity(trigrams(a), trigrams(b)) == pytest.approx(expected)
