"""Level 0 by words as BM25F (docs/search.md, *By words*): each skill's term statistics and
stems, computed in Python at save (``domain.search_text``), on both databases alike.

On PostgreSQL ``search_vector`` (every stem) and ``search_head`` (the name's, the slug's and the
description's) are now made of those stems rather than of ``to_tsvector('english', …)``, so
both databases match the same words; the per-workspace vocabulary of 0014 is counted again."""

from typing import Any

from django.db import migrations, models

from skills_app.domain.search_text import search_columns
from skills_app.migrations._postgresql import run_on_postgresql
from skills_app.migrations._search import VOCABULARY

_OLD_HEAD = """
        setweight(to_tsvector('english',
            coalesce(search_name, '') || ' ' || replace(coalesce(slug, ''), '-', ' ')), 'A')
        || setweight(to_tsvector('english', coalesce(search_description, '')), 'B')"""
_DROP = [
    "DROP INDEX IF EXISTS skill_search_head_idx",
    "DROP INDEX IF EXISTS skill_search_vector_idx",
    "ALTER TABLE skills_app_skill DROP COLUMN IF EXISTS search_head",
    "ALTER TABLE skills_app_skill DROP COLUMN IF EXISTS search_vector",
]
_INDEXES = [
    "CREATE INDEX skill_search_vector_idx ON skills_app_skill USING GIN (search_vector)",
    "CREATE INDEX skill_search_head_idx ON skills_app_skill USING GIN (search_head)",
]
STORAGE = [
    "ALTER TABLE skills_app_skill ALTER COLUMN search_terms SET STORAGE MAIN",
    """
    DO $$ BEGIN
      ALTER TABLE skills_app_skill ALTER COLUMN search_terms SET COMPRESSION lz4;
    EXCEPTION WHEN feature_not_supported THEN NULL;  -- a server built without lz4: pglz
    END $$
    """,
]
POSTGRES_UP = [
    *_DROP,
    # The stems held in the name (with the slug) or the description: count 0 or 1 of the three.
    """
    CREATE OR REPLACE FUNCTION xmemo_head_vector(terms jsonb) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT coalesce(array_to_tsvector(array_agg(e.key)), ''::tsvector)
        FROM jsonb_each(terms -> 't') e
       WHERE (e.value ->> 0)::int > 0 OR (e.value ->> 1)::int > 0
    $$
    """,
    "ALTER TABLE skills_app_skill ADD COLUMN search_vector tsvector GENERATED ALWAYS AS"
    " (array_to_tsvector(string_to_array(btrim(search_lexemes), ' '))) STORED",
    "ALTER TABLE skills_app_skill ADD COLUMN search_head tsvector GENERATED ALWAYS AS"
    " (xmemo_head_vector(search_terms)) STORED",
    *_INDEXES,
    *VOCABULARY,
]
POSTGRES_DOWN = [
    *_DROP,
    "DROP FUNCTION IF EXISTS xmemo_head_vector(jsonb)",
    f"""
    ALTER TABLE skills_app_skill ADD COLUMN search_vector tsvector
    GENERATED ALWAYS AS ({_OLD_HEAD}
        || setweight(to_tsvector('english', coalesce(search_body, '')), 'C')
    ) STORED
    """,
    f"ALTER TABLE skills_app_skill ADD COLUMN search_head tsvector GENERATED ALWAYS AS"
    f" ({_OLD_HEAD}) STORED",
    *_INDEXES,
    *VOCABULARY,
]


def _fill(apps: Any, schema_editor: Any) -> None:
    """The statistics of every skill's search columns (what ``services.skills`` now writes)."""
    skill_model = apps.get_model("skills_app", "Skill")
    batch = []
    for skill in skill_model.objects.only(
        "slug", "search_name", "search_description", "search_body"
    ).iterator(chunk_size=500):
        columns = search_columns(
            name=skill.search_name,
            slug=skill.slug,
            description=skill.search_description,
            body=skill.search_body,
        )
        skill.search_terms, skill.search_lexemes = (
            columns["search_terms"],
            columns["search_lexemes"],
        )
        batch.append(skill)
        if len(batch) == 500:
            skill_model.objects.bulk_update(batch, ["search_terms", "search_lexemes"])
            batch = []
    skill_model.objects.bulk_update(batch, ["search_terms", "search_lexemes"])


class Migration(migrations.Migration):
    dependencies = [("skills_app", "0030_scan_notifies_recall")]

    operations = [
        migrations.AddField(
            model_name="skill",
            name="search_terms",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="skill",
            name="search_lexemes",
            field=models.TextField(blank=True, default=""),
        ),
        # Read for each of a search's 100 candidates: kept in the row (MAIN), compressed with
        # lz4 where the server has it (its decompression about twice pglz's speed).
        run_on_postgresql(STORAGE, []),
        migrations.RunPython(_fill, migrations.RunPython.noop),
        run_on_postgresql(POSTGRES_UP, POSTGRES_DOWN),
    ]
