"""Component rows of an existing revision cannot be inserted or deleted by plain SQL
(docs/contract.md §3); migration 0002 refuses UPDATEs.

A revision's ``components_lock`` moves only forwards: ``open`` while its save inserts the
components, ``sealed`` after, ``purging`` while it is deleted for good. INSERT is allowed only
into an open revision, DELETE only from a purging one (or one gone). On PostgreSQL two deferred
checks close the rest at commit (an open revision is sealed, a purging one must be gone);
SQLite has no deferred triggers, so there only each single statement is refused."""

from importlib import import_module

from django.db import migrations, models

# On SQLite, changing a column's default rebuilds the table, which drops its triggers: the
# revision trigger of 0002 is made again here.
_IMMUTABILITY = import_module("skills_app.migrations.0002_immutability_triggers")

LOCK_MOVES = (
    "(OLD.components_lock = 'open' AND NEW.components_lock IN ('sealed', 'purging'))"
    " OR (OLD.components_lock = 'sealed' AND NEW.components_lock = 'purging')"
)

POSTGRES_UP = f"""
CREATE OR REPLACE FUNCTION xmemo_revision_lock_forward() RETURNS trigger AS $$
BEGIN
  IF NEW.components_lock IS DISTINCT FROM OLD.components_lock AND NOT ({LOCK_MOVES}) THEN
    RAISE EXCEPTION 'the components of skill revision % cannot be reopened', OLD.revision_id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER xmemo_revision_lock_forward BEFORE UPDATE ON skills_app_skillrevision
  FOR EACH ROW EXECUTE FUNCTION xmemo_revision_lock_forward();

CREATE OR REPLACE FUNCTION xmemo_component_insert_guard() RETURNS trigger AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM skills_app_skillrevision
                 WHERE id = NEW.revision_id AND components_lock = 'open') THEN
    RAISE EXCEPTION 'components can only be added while their revision is created'
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER xmemo_component_insert_guard BEFORE INSERT ON skills_app_skillcomponent
  FOR EACH ROW EXECUTE FUNCTION xmemo_component_insert_guard();

CREATE OR REPLACE FUNCTION xmemo_component_delete_guard() RETURNS trigger AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM skills_app_skillrevision
             WHERE id = OLD.revision_id AND components_lock <> 'purging') THEN
    RAISE EXCEPTION 'components can only be removed with their revision'
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN OLD;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER xmemo_component_delete_guard BEFORE DELETE ON skills_app_skillcomponent
  FOR EACH ROW EXECUTE FUNCTION xmemo_component_delete_guard();

CREATE OR REPLACE FUNCTION xmemo_revision_seal_at_commit() RETURNS trigger AS $$
BEGIN
  UPDATE skills_app_skillrevision SET components_lock = 'sealed'
    WHERE id = NEW.id AND components_lock = 'open';
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE CONSTRAINT TRIGGER xmemo_revision_seal_at_commit AFTER INSERT ON skills_app_skillrevision
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION xmemo_revision_seal_at_commit();

CREATE OR REPLACE FUNCTION xmemo_revision_purge_completes() RETURNS trigger AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM skills_app_skillrevision
             WHERE id = NEW.id AND components_lock = 'purging') THEN
    RAISE EXCEPTION 'skill revision % was marked for deletion but not deleted', NEW.revision_id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE CONSTRAINT TRIGGER xmemo_revision_purge_completes
  AFTER UPDATE ON skills_app_skillrevision
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW WHEN (NEW.components_lock = 'purging')
  EXECUTE FUNCTION xmemo_revision_purge_completes();
"""

POSTGRES_DOWN = """
DROP TRIGGER IF EXISTS xmemo_revision_lock_forward ON skills_app_skillrevision;
DROP TRIGGER IF EXISTS xmemo_component_insert_guard ON skills_app_skillcomponent;
DROP TRIGGER IF EXISTS xmemo_component_delete_guard ON skills_app_skillcomponent;
DROP TRIGGER IF EXISTS xmemo_revision_seal_at_commit ON skills_app_skillrevision;
DROP TRIGGER IF EXISTS xmemo_revision_purge_completes ON skills_app_skillrevision;
DROP FUNCTION IF EXISTS xmemo_revision_lock_forward();
DROP FUNCTION IF EXISTS xmemo_component_insert_guard();
DROP FUNCTION IF EXISTS xmemo_component_delete_guard();
DROP FUNCTION IF EXISTS xmemo_revision_seal_at_commit();
DROP FUNCTION IF EXISTS xmemo_revision_purge_completes();
"""

SQLITE_UP = [
    "DROP TRIGGER IF EXISTS xmemo_revision_immutable;",
    _IMMUTABILITY.SQLITE_UP[0],
    f"""CREATE TRIGGER xmemo_revision_lock_forward BEFORE UPDATE ON skills_app_skillrevision
    WHEN NEW.components_lock IS NOT OLD.components_lock AND NOT ({LOCK_MOVES})
    BEGIN SELECT RAISE(ABORT, 'the components of a skill revision cannot be reopened'); END;""",
    """CREATE TRIGGER xmemo_component_insert_guard BEFORE INSERT ON skills_app_skillcomponent
    WHEN NOT EXISTS (SELECT 1 FROM skills_app_skillrevision
                     WHERE id = NEW.revision_id AND components_lock = 'open')
    BEGIN SELECT RAISE(ABORT, 'components can only be added while their revision is created');
    END;""",
    """CREATE TRIGGER xmemo_component_delete_guard BEFORE DELETE ON skills_app_skillcomponent
    WHEN EXISTS (SELECT 1 FROM skills_app_skillrevision
                 WHERE id = OLD.revision_id AND components_lock <> 'purging')
    BEGIN SELECT RAISE(ABORT, 'components can only be removed with their revision'); END;""",
]
SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS xmemo_revision_lock_forward;",
    "DROP TRIGGER IF EXISTS xmemo_component_insert_guard;",
    "DROP TRIGGER IF EXISTS xmemo_component_delete_guard;",
]


def _run(schema_editor, postgres, sqlite):  # type: ignore[no-untyped-def]
    vendor = schema_editor.connection.vendor
    statements = {"postgresql": [postgres], "sqlite": sqlite}.get(vendor)
    if statements is None:
        raise RuntimeError(f"No component triggers written for database vendor {vendor!r}")
    with schema_editor.connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    _run(schema_editor, POSTGRES_UP, SQLITE_UP)


def backwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    _run(schema_editor, POSTGRES_DOWN, SQLITE_DOWN)


class Migration(migrations.Migration):
    dependencies = [("skills_app", "0006_job_outbox")]
    operations = [
        # Existing revisions are complete: sealed. New ones start open (the model default).
        migrations.AddField(
            model_name="skillrevision",
            name="components_lock",
            field=models.CharField(default="sealed", editable=False, max_length=8),
        ),
        migrations.AlterField(
            model_name="skillrevision",
            name="components_lock",
            field=models.CharField(default="open", editable=False, max_length=8),
        ),
        migrations.RunPython(forwards, backwards),
    ]
