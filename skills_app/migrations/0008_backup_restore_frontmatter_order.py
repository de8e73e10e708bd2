"""Frontmatter keeps its key order on PostgreSQL (``json`` instead of ``jsonb``); jobs gain
the ``restore`` kind (a choices change only: nothing happens in the database); a revision's
created_at gets a default instead of auto_now_add, so a restore can keep the recorded time.

The column type changes on PostgreSQL only (SQLite's text column already keeps the order, and
letting Django remake the SQLite table would drop the immutability triggers of 0002). The
revision trigger is replaced with one that compares ``frontmatter`` as text: ``json`` has no
equality operator, and comparing the text is stricter anyway (a reordering is a change).
Existing rows keep jsonb's order: the order they were written in is already lost.
"""

from importlib import import_module

from django.db import migrations, models

import django.utils.timezone
import skills_app.models.fields

_triggers = import_module("skills_app.migrations.0002_immutability_triggers")


def _revision_function(frontmatter: str) -> str:
    content = [frontmatter if c == "frontmatter" else f"NEW.{c} IS DISTINCT FROM OLD.{c}"
               for c in _triggers.REVISION_CONTENT]
    links = [
        f"(NEW.{c} IS DISTINCT FROM OLD.{c} AND NEW.{c} IS NOT NULL)"
        for c in _triggers.NULLABLE_LINKS
    ]
    return f"""
CREATE OR REPLACE FUNCTION xmemo_refuse_revision_update() RETURNS trigger AS $$
BEGIN
  IF {" OR ".join(content + links)} THEN
    RAISE EXCEPTION 'skill revision % is immutable: create a new revision instead', OLD.revision_id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""


UP = (
    "ALTER TABLE skills_app_skillrevision ALTER COLUMN frontmatter TYPE json "
    "USING frontmatter::json;"
    + _revision_function("NEW.frontmatter::text IS DISTINCT FROM OLD.frontmatter::text")
)
DOWN = (
    "ALTER TABLE skills_app_skillrevision ALTER COLUMN frontmatter TYPE jsonb "
    "USING frontmatter::jsonb;"
    + _revision_function("NEW.frontmatter IS DISTINCT FROM OLD.frontmatter")
)


def _run(schema_editor, sql):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return
    # A bare cursor: PL/pgSQL's '%' placeholders must not be taken for query parameters.
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(sql)


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    _run(schema_editor, UP)


def backwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    _run(schema_editor, DOWN)


class Migration(migrations.Migration):
    dependencies = [("skills_app", "0007_component_row_triggers")]
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="skillrevision",
                    name="frontmatter",
                    field=skills_app.models.fields.OrderedJSONField(default=dict),
                ),
                # A Python-side default instead of auto_now_add (restore keeps the recorded
                # time): nothing changes in the database.
                migrations.AlterField(
                    model_name="skillrevision",
                    name="created_at",
                    field=models.DateTimeField(default=django.utils.timezone.now, editable=False),
                ),
            ],
            database_operations=[migrations.RunPython(forwards, backwards)],
        ),
        migrations.AlterField(
            model_name="job",
            name="kind",
            field=models.CharField(
                choices=[
                    ("import", "Import"),
                    ("export", "Export"),
                    ("execute", "Execute"),
                    ("restore", "Restore"),
                ],
                max_length=16,
            ),
        ),
    ]
