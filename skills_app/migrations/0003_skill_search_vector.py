"""Level 0 full-text search on PostgreSQL (SPEC §5); nothing on SQLite, scored in Python there.

Two stored generated ``tsvector`` columns over the search columns ``services.skills`` keeps in
step with the current revision, so they never drift: ``search_vector`` (name and slug A,
description B, body C) and ``search_head`` (name, slug, description), GIN-indexed, read only by
``selectors.search`` and absent from the model. Also the statement triggers that ``NOTIFY
xmemo_recall`` on every change to the tables recall resolves through (``infra/invalidation.py``)."""

from django.db import migrations

from skills_app.migrations._postgresql import run_on_postgresql

NOTIFY_TABLES = (
    "skills_app_skill",
    "skills_app_skillrevision",
    "skills_app_membership",
    "skills_app_workspace",
    "skills_app_apitoken",
)

_HEAD = """
        setweight(to_tsvector('english',
            coalesce(search_name, '') || ' ' || replace(coalesce(slug, ''), '-', ' ')), 'A')
        || setweight(to_tsvector('english', coalesce(search_description, '')), 'B')"""

POSTGRES_UP = [
    # Everything, for matching: name and slug (A), description (B), body (C).
    f"""
    ALTER TABLE skills_app_skill ADD COLUMN search_vector tsvector
    GENERATED ALWAYS AS ({_HEAD}
        || setweight(to_tsvector('english', coalesce(search_body, '')), 'C')
    ) STORED
    """,
    # The head alone (a few hundred bytes, kept inline): matching by name/description and
    # ranking, which then never has to read the large body vector.
    f"ALTER TABLE skills_app_skill ADD COLUMN search_head tsvector GENERATED ALWAYS AS ({_HEAD}) STORED",
    "CREATE INDEX skill_search_vector_idx ON skills_app_skill USING GIN (search_vector)",
    "CREATE INDEX skill_search_head_idx ON skills_app_skill USING GIN (search_head)",
    # Recall caches (skills_app/selectors/invalidation.py): every committed change to what
    # recall resolves through tells every listening process, at commit.
    """
    CREATE OR REPLACE FUNCTION xmemo_notify_recall() RETURNS trigger AS $$
    BEGIN
      PERFORM pg_notify('xmemo_recall', TG_TABLE_NAME);
      RETURN NULL;
    END;
    $$ LANGUAGE plpgsql
    """,
    *[
        f"CREATE TRIGGER xmemo_recall_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE"
        f" ON {table} FOR EACH STATEMENT EXECUTE FUNCTION xmemo_notify_recall()"
        for table in NOTIFY_TABLES
    ],
]
POSTGRES_DOWN = [
    *[f"DROP TRIGGER IF EXISTS xmemo_recall_notify ON {table}" for table in NOTIFY_TABLES],
    "DROP FUNCTION IF EXISTS xmemo_notify_recall()",
    "DROP INDEX IF EXISTS skill_search_head_idx",
    "DROP INDEX IF EXISTS skill_search_vector_idx",
    "ALTER TABLE skills_app_skill DROP COLUMN IF EXISTS search_head",
    "ALTER TABLE skills_app_skill DROP COLUMN IF EXISTS search_vector",
]


class Migration(migrations.Migration):
    dependencies = [("skills_app", "0002_immutability_triggers")]
    operations = [run_on_postgresql(POSTGRES_UP, POSTGRES_DOWN)]
