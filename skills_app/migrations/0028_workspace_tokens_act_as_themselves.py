"""Workspace tokens act as themselves (docs/contract.md §16): what one writes or decides names
the token, never its maker — revisions (``author_token``, ``reviewed_by_token``), comments
(``author_token``) and approvals (``token``).

``author_token`` is part of a revision's immutable record like ``author``: the revision trigger
of 0002/0008/0012 is rewritten to refuse changing it, except to NULL (SET_NULL when the token
row goes). The columns are nullable without a default, so SQLite adds them in place (a rebuilt
table would lose its triggers).
"""

from importlib import import_module

import django.db.models.deletion
from django.db import migrations, models

_triggers = import_module("skills_app.migrations.0002_immutability_triggers")
_tokens = import_module("skills_app.migrations.0012_revision_approx_tokens")

TABLE = "skills_app_skillrevision"


def _checks(links, *, distinct, text_frontmatter):  # type: ignore[no-untyped-def]
    checks = [
        f"NEW.frontmatter::text {distinct} OLD.frontmatter::text"
        if c == "frontmatter" and text_frontmatter
        else f"NEW.{c} {distinct} OLD.{c}"
        for c in _tokens.CONTENT
    ]
    checks += [f"(NEW.{c} {distinct} OLD.{c} AND NEW.{c} IS NOT NULL)" for c in links]
    return " OR ".join(checks)


def _statements(links):  # type: ignore[no-untyped-def]
    postgres = f"""
CREATE OR REPLACE FUNCTION xmemo_refuse_revision_update() RETURNS trigger AS $$
BEGIN
  IF {_checks(links, distinct="IS DISTINCT FROM", text_frontmatter=True)} THEN
    RAISE EXCEPTION 'skill revision % is immutable: create a new revision instead', OLD.revision_id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""
    sqlite = f"""CREATE TRIGGER xmemo_revision_immutable BEFORE UPDATE ON {TABLE}
    WHEN {_checks(links, distinct="IS NOT", text_frontmatter=False)}
    BEGIN SELECT RAISE(ABORT, 'skill revision is immutable: create a new revision instead'); END;"""
    return {
        "postgresql": [postgres],
        "sqlite": ["DROP TRIGGER IF EXISTS xmemo_revision_immutable;", sqlite],
    }


def _execute(statements):  # type: ignore[no-untyped-def]
    def run(apps, schema_editor):  # type: ignore[no-untyped-def]
        vendor = schema_editor.connection.vendor
        if vendor not in statements:
            raise RuntimeError(f"No revision trigger written for database vendor {vendor!r}")
        # A bare cursor: PL/pgSQL's '%' placeholders must not be taken for query parameters.
        with schema_editor.connection.cursor() as cursor:
            for sql in statements[vendor]:
                cursor.execute(sql)

    return run


class _RevisionColumn(migrations.AddField):
    """A token column on the revision table, added in place. Back on SQLite, the column goes with
    ``DROP COLUMN`` after its index: Django would remake the table, which the triggers of 0007
    on the component table refuse (they name the revision table)."""

    def database_backwards(self, app_label, schema_editor, from_state, to_state):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor != "sqlite":
            super().database_backwards(app_label, schema_editor, from_state, to_state)
            return
        column = f"{self.name}_id"
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = %s"
                " AND sql LIKE %s",
                [TABLE, f'%"{column}"%'],
            )
            for (index,) in cursor.fetchall():
                cursor.execute(f'DROP INDEX "{index}"')
            cursor.execute(f'ALTER TABLE {TABLE} DROP COLUMN "{column}"')


def _revision_column(name):  # type: ignore[no-untyped-def]
    return _RevisionColumn(
        model_name="skillrevision",
        name=name,
        field=models.ForeignKey(
            blank=True,
            null=True,
            on_delete=django.db.models.deletion.SET_NULL,
            related_name="+",
            to="skills_app.apitoken",
        ),
    )


SEAL = _statements([*_triggers.NULLABLE_LINKS, "author_token_id"])
UNSEAL = _statements(_triggers.NULLABLE_LINKS)


class Migration(migrations.Migration):
    dependencies = [
        ("skills_app", "0027_revision_scans"),
    ]

    operations = [
        migrations.AddField(
            model_name="revisionapproval",
            name="token",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="skills_app.apitoken",
            ),
        ),
        migrations.AddField(
            model_name="revisioncomment",
            name="author_token",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="skills_app.apitoken",
            ),
        ),
        _revision_column("author_token"),
        _revision_column("reviewed_by_token"),
        migrations.RunPython(_execute(SEAL), _execute(UNSEAL)),
    ]
