"""Level 0 ranking on PostgreSQL: a per-workspace vocabulary, typo matching, change stamps.

``skills_app_searchterm``: how many searchable skills of a workspace hold each lexeme (IDF
within what the caller may read, one index look-up per query), kept exact by a row trigger
that takes its rows in lexeme order (concurrent saves never deadlock). ``pg_trgm`` with a
trigram index on it matches an unknown query word to the nearest known ones.
``search_updated_at`` is stamped whenever what Level 0 shows of a skill can change, so the
vector indexes of ``selectors/search/semantic.py`` refresh only that. PostgreSQL only."""

from django.db import migrations

from skills_app.migrations._postgresql import run_on_postgresql

POSTGRES_UP = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    """
    CREATE TABLE skills_app_searchterm (
        workspace_id bigint NOT NULL,
        lexeme text NOT NULL,
        df integer NOT NULL,
        PRIMARY KEY (workspace_id, lexeme)
    )
    """,
    "CREATE INDEX searchterm_lexeme_trgm_idx ON skills_app_searchterm"
    " USING GIN (lexeme gin_trgm_ops)",
    """
    CREATE OR REPLACE FUNCTION xmemo_search_terms() RETURNS trigger AS $$
    DECLARE
      old_counts boolean := TG_OP <> 'INSERT' AND OLD.status = 'active'
                            AND OLD.current_revision_id IS NOT NULL;
      new_counts boolean := TG_OP <> 'DELETE' AND NEW.status = 'active'
                            AND NEW.current_revision_id IS NOT NULL;
    BEGIN
      IF TG_OP = 'UPDATE' AND old_counts = new_counts AND OLD.workspace_id = NEW.workspace_id
         AND OLD.search_vector IS NOT DISTINCT FROM NEW.search_vector THEN
        RETURN NULL;
      END IF;
      INSERT INTO skills_app_searchterm AS t (workspace_id, lexeme, df)
      SELECT ws, lexeme, sum(d)::integer FROM (
        SELECT OLD.workspace_id AS ws, v.lexeme, -1 AS d
          FROM unnest(CASE WHEN old_counts THEN OLD.search_vector END) v
        UNION ALL SELECT OLD.workspace_id, '', -1 WHERE old_counts
        UNION ALL SELECT NEW.workspace_id, v.lexeme, 1
          FROM unnest(CASE WHEN new_counts THEN NEW.search_vector END) v
        UNION ALL SELECT NEW.workspace_id, '', 1 WHERE new_counts
      ) changes
      GROUP BY ws, lexeme HAVING sum(d) <> 0 ORDER BY ws, lexeme
      ON CONFLICT (workspace_id, lexeme) DO UPDATE SET df = t.df + EXCLUDED.df;
      RETURN NULL;
    END;
    $$ LANGUAGE plpgsql
    """,
    "CREATE TRIGGER xmemo_search_terms AFTER INSERT OR UPDATE OR DELETE ON skills_app_skill"
    " FOR EACH ROW EXECUTE FUNCTION xmemo_search_terms()",
    # Skills that existed before this migration.
    """
    INSERT INTO skills_app_searchterm (workspace_id, lexeme, df)
    SELECT s.workspace_id, v.lexeme, count(*)
      FROM skills_app_skill s, unnest(s.search_vector) v
     WHERE s.status = 'active' AND s.current_revision_id IS NOT NULL
     GROUP BY 1, 2
    UNION ALL
    SELECT s.workspace_id, '', count(*) FROM skills_app_skill s
     WHERE s.status = 'active' AND s.current_revision_id IS NOT NULL
     GROUP BY 1
    """,
    "ALTER TABLE skills_app_skill ADD COLUMN search_updated_at timestamptz NOT NULL"
    " DEFAULT clock_timestamp()",
    "CREATE INDEX skill_search_updated_idx ON skills_app_skill (workspace_id, search_updated_at)",
    """
    CREATE OR REPLACE FUNCTION xmemo_search_stamp() RETURNS trigger AS $$
    BEGIN
      IF TG_OP = 'INSERT'
         OR OLD.current_revision_id IS DISTINCT FROM NEW.current_revision_id
         OR OLD.published_revision_id IS DISTINCT FROM NEW.published_revision_id
         OR OLD.status IS DISTINCT FROM NEW.status
         OR OLD.model_invocable IS DISTINCT FROM NEW.model_invocable
         OR OLD.search_name IS DISTINCT FROM NEW.search_name
         OR OLD.search_description IS DISTINCT FROM NEW.search_description
         OR OLD.slug IS DISTINCT FROM NEW.slug THEN
        NEW.search_updated_at := clock_timestamp();
      END IF;
      RETURN NEW;
    END;
    $$ LANGUAGE plpgsql
    """,
    "CREATE TRIGGER xmemo_search_stamp BEFORE INSERT OR UPDATE ON skills_app_skill"
    " FOR EACH ROW EXECUTE FUNCTION xmemo_search_stamp()",
]

POSTGRES_DOWN = [
    "DROP TRIGGER IF EXISTS xmemo_search_stamp ON skills_app_skill",
    "DROP FUNCTION IF EXISTS xmemo_search_stamp()",
    "DROP INDEX IF EXISTS skill_search_updated_idx",
    "ALTER TABLE skills_app_skill DROP COLUMN IF EXISTS search_updated_at",
    "DROP TRIGGER IF EXISTS xmemo_search_terms ON skills_app_skill",
    "DROP FUNCTION IF EXISTS xmemo_search_terms()",
    "DROP TABLE IF EXISTS skills_app_searchterm",
]


class Migration(migrations.Migration):
    dependencies = [("skills_app", "0013_revision_embeddings")]
    operations = [run_on_postgresql(POSTGRES_UP, POSTGRES_DOWN)]
