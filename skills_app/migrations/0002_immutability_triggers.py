"""Database-enforced immutability (SPEC §3): revision content, component rows and blobs.

Only ``state`` and the review fields of a revision may change; ``author_id`` and ``parent_id``
may only become NULL (Django's SET_NULL when a user or parent row goes away). Deletes are
allowed: deleting a skill for good is a product feature.
"""

from django.db import migrations

REVISION_CONTENT = [
    "revision_id",
    "skill_id",
    "workspace_id",
    "revision_number",
    "name",
    "description",
    "frontmatter",
    "instruction_body",
    "canonical_hash",
    "message",
    "source",
    "source_ref",
    "created_at",
]
NULLABLE_LINKS = ["author_id", "parent_id"]


def _changed(op: str) -> str:
    parts = [f"NEW.{c} {op} OLD.{c}" for c in REVISION_CONTENT]
    parts += [f"(NEW.{c} {op} OLD.{c} AND NEW.{c} IS NOT NULL)" for c in NULLABLE_LINKS]
    return " OR ".join(parts)


POSTGRES_UP = f"""
CREATE OR REPLACE FUNCTION xmemo_refuse_revision_update() RETURNS trigger AS $$
BEGIN
  IF {_changed("IS DISTINCT FROM")} THEN
    RAISE EXCEPTION 'skill revision % is immutable: create a new revision instead', OLD.revision_id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER xmemo_revision_immutable BEFORE UPDATE ON skills_app_skillrevision
  FOR EACH ROW EXECUTE FUNCTION xmemo_refuse_revision_update();

CREATE OR REPLACE FUNCTION xmemo_refuse_update() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION '% rows are immutable', TG_TABLE_NAME
    USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER xmemo_component_immutable BEFORE UPDATE ON skills_app_skillcomponent
  FOR EACH ROW EXECUTE FUNCTION xmemo_refuse_update();
CREATE TRIGGER xmemo_blob_immutable BEFORE UPDATE ON skills_app_blob
  FOR EACH ROW EXECUTE FUNCTION xmemo_refuse_update();
"""

POSTGRES_DOWN = """
DROP TRIGGER IF EXISTS xmemo_revision_immutable ON skills_app_skillrevision;
DROP TRIGGER IF EXISTS xmemo_component_immutable ON skills_app_skillcomponent;
DROP TRIGGER IF EXISTS xmemo_blob_immutable ON skills_app_blob;
DROP FUNCTION IF EXISTS xmemo_refuse_revision_update();
DROP FUNCTION IF EXISTS xmemo_refuse_update();
"""

SQLITE_UP = [
    f"""CREATE TRIGGER xmemo_revision_immutable BEFORE UPDATE ON skills_app_skillrevision
    WHEN {_changed("IS NOT")}
    BEGIN SELECT RAISE(ABORT, 'skill revision is immutable: create a new revision instead'); END;""",
    """CREATE TRIGGER xmemo_component_immutable BEFORE UPDATE ON skills_app_skillcomponent
    BEGIN SELECT RAISE(ABORT, 'skill component rows are immutable'); END;""",
    """CREATE TRIGGER xmemo_blob_immutable BEFORE UPDATE ON skills_app_blob
    BEGIN SELECT RAISE(ABORT, 'blob rows are immutable'); END;""",
]
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS xmemo_revision_immutable;",
    "DROP TRIGGER IF EXISTS xmemo_component_immutable;",
    "DROP TRIGGER IF EXISTS xmemo_blob_immutable;",
]


def _run(schema_editor, postgres, sqlite):  # type: ignore[no-untyped-def]
    vendor = schema_editor.connection.vendor
    statements = {"postgresql": [postgres], "sqlite": sqlite}.get(vendor)
    if statements is None:
        raise RuntimeError(f"No immutability triggers written for database vendor {vendor!r}")
    # A bare cursor: PL/pgSQL's '%' placeholders must not be taken for query parameters.
    with schema_editor.connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    _run(schema_editor, POSTGRES_UP, SQLITE_UP)


def backwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    _run(schema_editor, POSTGRES_DOWN, SQLITE_DOWN)


class Migration(migrations.Migration):
    dependencies = [("skills_app", "0001_initial")]
    operations = [migrations.RunPython(forwards, backwards)]
