"""Where PostgreSQL keeps what Level 0 reads of every match: in the skill's row, not in TOAST."""

from __future__ import annotations

import random

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from skills_app.models import Skill
from tests.factories import Env, publish
from tests.support import require_service

# Read for each skill a search considers: the head, every match's tie-breaker; the ids, name and
# description, each answer's descriptor.
READ_PER_MATCH = ("skill_id", "slug", "search_name", "search_description", "search_head")


@pytest.fixture
def pg(db: None) -> None:
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")


def _wordy_body(seed: int) -> str:
    """A body of 400 made-up words: statistics that fill most of a row even compressed."""
    rng = random.Random(seed)
    words = (
        "".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(4))
        for _ in range(400)
    )
    return " ".join(words)


def _out_of_line(pk: int) -> set[str]:
    """The columns of skill ``pk`` stored in TOAST: a value whose first byte is 0x01 there is a
    pointer to its chunks (``pageinspect`` reads the row as stored)."""
    with connection.cursor() as cursor:
        cursor.execute("CREATE EXTENSION IF NOT EXISTS pageinspect")
        cursor.execute(
            "SELECT a.attname FROM skills_app_skill s,"
            " LATERAL heap_page_item_attrs(get_raw_page('skills_app_skill',"
            " (s.ctid::text::point)[0]::int), 'skills_app_skill'::regclass) i, pg_attribute a"
            " WHERE s.id = %s AND i.lp = (s.ctid::text::point)[1]::int"
            " AND a.attrelid = 'skills_app_skill'::regclass AND a.attnum > 0"
            " AND NOT a.attisdropped AND a.attlen = -1 AND get_byte(i.t_attrs[a.attnum], 0) = 1",
            [pk],
        )
        return {name for (name,) in cursor.fetchall()}


def _stamp(pk: int) -> object:
    """When what Level 0 shows of skill ``pk`` last changed (raw SQL's column, migration 0014)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT search_updated_at FROM skills_app_skill WHERE id = %s", [pk])
        return cursor.fetchone()[0]


def _vocabulary() -> list[tuple[int, str, int]]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT workspace_id, lexeme, df FROM skills_app_searchterm ORDER BY 1, 2")
        return cursor.fetchall()


def _publish_wordy(env: Env, slug: str) -> int:
    publish(
        env.owner,
        env.personal,
        slug=slug,
        name="Rotate the signing keys",
        description="Rotate the release signing keys before they expire. " * 3,
        instruction_body=_wordy_body(len(slug)),
    )
    return Skill.objects.get(slug=slug).pk


def test_what_a_search_reads_of_each_match_stays_in_the_row(env: Env, pg: None) -> None:
    """Each skill's term statistics are kept in its row (MAIN, read for each of a search's 100
    candidates); with them there the row was still over PostgreSQL's 2 KB target, so the
    smaller values were moved out, down to the skill's id: the head a search tests for each of
    its ~220 matches, the ids, name and description of each answer. At 100,000 skills: 4 pages
    read per match instead of 1; 1,390 per three-word search instead of 545, 360 of them copied
    in from the operating system's cache."""
    pk = _publish_wordy(env, "rotate-keys")
    assert "search_lexemes" in _out_of_line(pk)  # the row was full: the large ones went out
    assert _out_of_line(pk).isdisjoint(READ_PER_MATCH)


@pytest.mark.django_db(transaction=True)
def test_the_migration_moves_existing_skills_values_back_into_their_rows(
    env: Env, pg: None
) -> None:
    graph = MigrationExecutor(connection).loader.graph
    (mine,) = [k for k in graph.nodes if k[0] == "skills_app" and k[1].endswith("_search_inline")]
    (before,) = [p.key for p in graph.node_map[mine].parents if p.key[0] == "skills_app"]
    MigrationExecutor(connection).migrate([before])
    pk = _publish_wordy(env, "rotate-old-keys")
    # As 0031 left every skill (a short slug or name stays in: too small to be worth moving).
    assert {"skill_id", "search_description", "search_head"} <= _out_of_line(pk)
    stamped, counted = _stamp(pk), _vocabulary()
    MigrationExecutor(connection).migrate(graph.leaf_nodes("skills_app"))
    assert _out_of_line(pk).isdisjoint(READ_PER_MATCH)
    # The same values: nothing a search or the semantic index watches has changed.
    assert (_stamp(pk), _vocabulary()) == (stamped, counted)
