"""Level 0 search: PostgreSQL full-text search (weighted, GIN-indexed) and the SQLite fallback."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from skills_app import errors
from skills_app.access import Actor
from skills_app.domain.search_text import query_words
from skills_app.models import Skill
from skills_app.selectors.recall import recall_search
from tests.factories import Env, actor_for, make_token, publish, save
from tests.support import require_service


def _slugs(answer: Any) -> list[str]:
    return [hit["slug"] for hit in answer["data"]["results"]]


def test_query_words_split_words_and_drop_stop_words_before_the_cap() -> None:
    assert query_words("Deploy the web_app, DEPLOY again!").words == ("deploy", "web", "app")
    assert query_words("'; DROP TABLE x; --").words == ("drop", "table", "x")
    many = " ".join(f"the w{i} of" for i in range(40))
    assert query_words(many).words == tuple(f"w{i}" for i in range(12))


def test_only_a_last_word_still_being_typed_is_a_prefix() -> None:
    assert query_words("rotate cert").last_is_prefix
    assert not query_words("rotate cert ").last_is_prefix  # a space: the word is finished
    assert not query_words("rotate cert.").last_is_prefix
    assert not query_words("rotate db").last_is_prefix  # too short to stand for a prefix
    assert not query_words("rotate the").last_is_prefix  # a stop word is no content


def test_postgresql_full_text_search_uses_the_weighted_gin_index(env: Env) -> None:
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = 'skills_app_skill'"
            " AND indexname = 'skill_search_vector_idx'"
        )
        [(indexdef,)] = cursor.fetchall()
    assert "USING gin (search_vector)" in indexdef
    save(
        env.owner,
        env.personal,
        slug="rollback",
        name="Rollback a release",
        description="Undo a bad deployment.",
        instruction_body="Use the previous image tag.",
    )
    save(
        env.owner,
        env.personal,
        slug="canary",
        name="Canary analysis",
        description="Compare metrics.",
        instruction_body="Roll back when errors rise; rollbacks are cheap.",
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT slug, search_vector::text FROM skills_app_skill ORDER BY slug")
        vectors = dict(cursor.fetchall())
    assert "'rollback'" in vectors["rollback"]  # stems
    assert "'undo'" in vectors["rollback"]
    terms = Skill.objects.get(slug="rollback").search_terms["t"]
    assert terms["rollback"] == [2, 0, 0]  # name and slug
    assert terms["undo"] == [0, 1, 0]  # description
    actor = actor_for(env.owner)
    # Stemming: "rolling back" and "rollbacks" find both; the name match ranks first.
    answer = recall_search(actor=actor, query="rollbacks")
    assert _slugs(answer) == ["rollback", "canary"]
    # Prefix matching for a half-typed word.
    assert _slugs(recall_search(actor=actor, query="canar")) == ["canary"]
    # Stop words alone match nothing (and do not fail).
    assert _slugs(recall_search(actor=actor, query="the and of")) == []
    # Query text is never SQL: quotes and operators are only words.
    hostile = recall_search(actor=actor, query="rollback' | !canary & (")
    assert sorted(_slugs(hostile)) == ["canary", "rollback"]
    # The plan can use the GIN index (forced, since the table is tiny).
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(
            "EXPLAIN SELECT skill_id FROM skills_app_skill"
            " WHERE search_vector @@ to_tsquery('english', 'rollback')"
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "skill_search_vector_idx" in plan


def test_search_follows_the_current_revision(env: Env) -> None:
    save(env.owner, env.personal, slug="s", name="Old name", instruction_body="zeppelin")
    actor = actor_for(env.owner)
    assert _slugs(recall_search(actor=actor, query="zeppelin")) == ["s"]
    save(env.owner, env.personal, slug="s", name="New name", instruction_body="submarine")
    assert _slugs(recall_search(actor=actor, query="zeppelin")) == []
    [hit] = recall_search(actor=actor, query="submarine")["data"]["results"]
    assert hit["name"] == "New name"


def test_search_scope_is_the_actors_readable_workspaces(env: Env) -> None:
    publish(env.owner, env.team, slug="team-skill", instruction_body="quasar")
    save(
        env.outsider,
        env.personal.__class__.objects.get(slug=env.outsider.username),
        slug="foreign",
        instruction_body="quasar",
    )
    assert _slugs(recall_search(actor=actor_for(env.member), query="quasar")) == ["team-skill"]
    assert _slugs(recall_search(actor=actor_for(env.outsider), query="quasar")) == ["foreign"]
    token, _ = make_token(env.owner, workspace=env.personal)
    restricted = Actor(user=env.owner, token=token, via="api")
    assert _slugs(recall_search(actor=restricted, query="quasar")) == []


def test_search_validates_its_input(env: Env) -> None:
    actor = actor_for(env.owner)
    for kwargs in (
        {"query": ""},
        {"query": "x" * 1001},
        {"query": "x", "limit": 0},
        {"query": "x", "limit": 51},
    ):
        with pytest.raises(errors.ValidationFailed):
            recall_search(actor=actor, **kwargs)
    token, _ = make_token(env.owner, scopes=["skills:write"])
    with pytest.raises(errors.PermissionDenied):
        recall_search(actor=Actor(user=env.owner, token=token), query="x")
