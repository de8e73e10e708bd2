"""Each revision carries ``approx_tokens``, the estimated context cost of its Level 1 answer
(docs/contract.md §5, ``domain.context_cost``), so Level 0 shows it without reading a body.

Added, filled from existing content, then made part of the immutable content the revision
trigger of 0002/0008 guards (a new heuristic would be a migration that lifts the guard). Raw SQL
for the column: on SQLite Django would remake the table and drop the triggers of 0002 and 0007
(the DEFAULT 0 SQLite keeps is never relied on)."""

from importlib import import_module

from django.db import migrations, models

from skills_app.domain.context_cost import revision_tokens

_triggers = import_module("skills_app.migrations.0002_immutability_triggers")

TABLE = "skills_app_skillrevision"
CONTENT = [*_triggers.REVISION_CONTENT, "approx_tokens"]
BATCH = 500


def _postgres_function(content):  # type: ignore[no-untyped-def]
    """0008's trigger function over ``content`` (frontmatter compared as text, as there)."""
    checks = [
        "NEW.frontmatter::text IS DISTINCT FROM OLD.frontmatter::text"
        if c == "frontmatter"
        else f"NEW.{c} IS DISTINCT FROM OLD.{c}"
        for c in content
    ]
    checks += [
        f"(NEW.{c} IS DISTINCT FROM OLD.{c} AND NEW.{c} IS NOT NULL)"
        for c in _triggers.NULLABLE_LINKS
    ]
    return f"""
CREATE OR REPLACE FUNCTION xmemo_refuse_revision_update() RETURNS trigger AS $$
BEGIN
  IF {" OR ".join(checks)} THEN
    RAISE EXCEPTION 'skill revision % is immutable: create a new revision instead', OLD.revision_id
      USING ERRCODE = 'integrity_constraint_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""


def _sqlite_trigger(content):  # type: ignore[no-untyped-def]
    """0002's SQLite trigger over ``content``."""
    checks = [f"NEW.{c} IS NOT OLD.{c}" for c in content]
    checks += [f"(NEW.{c} IS NOT OLD.{c} AND NEW.{c} IS NOT NULL)" for c in _triggers.NULLABLE_LINKS]
    return f"""CREATE TRIGGER xmemo_revision_immutable BEFORE UPDATE ON {TABLE}
    WHEN {" OR ".join(checks)}
    BEGIN SELECT RAISE(ABORT, 'skill revision is immutable: create a new revision instead'); END;"""


ADD = {
    "postgresql": [
        f"ALTER TABLE {TABLE} ADD COLUMN approx_tokens integer NULL CHECK (approx_tokens >= 0);"
    ],
    "sqlite": [
        f"ALTER TABLE {TABLE} ADD COLUMN approx_tokens integer unsigned NOT NULL DEFAULT 0"
        " CHECK (approx_tokens >= 0);"
    ],
}
SEAL = {
    "postgresql": [
        f"ALTER TABLE {TABLE} ALTER COLUMN approx_tokens SET NOT NULL;",
        _postgres_function(CONTENT),
    ],
    "sqlite": ["DROP TRIGGER IF EXISTS xmemo_revision_immutable;", _sqlite_trigger(CONTENT)],
}
REMOVE = {
    "postgresql": [
        _postgres_function(_triggers.REVISION_CONTENT),  # 0008's function, as it was
        f"ALTER TABLE {TABLE} DROP COLUMN approx_tokens;",
    ],
    "sqlite": [
        "DROP TRIGGER IF EXISTS xmemo_revision_immutable;",
        _sqlite_trigger(_triggers.REVISION_CONTENT),
        f"ALTER TABLE {TABLE} DROP COLUMN approx_tokens;",
    ],
}


def _execute(schema_editor, statements):  # type: ignore[no-untyped-def]
    vendor = schema_editor.connection.vendor
    if vendor not in statements:
        raise RuntimeError(f"No approx_tokens column written for database vendor {vendor!r}")
    # A bare cursor: PL/pgSQL's '%' placeholders must not be taken for query parameters.
    with schema_editor.connection.cursor() as cursor:
        for sql in statements[vendor]:
            cursor.execute(sql)


def _fill(apps, schema_editor):  # type: ignore[no-untyped-def]
    """The estimate of every existing revision, in batches, as the services compute it."""
    revision_model = apps.get_model("skills_app", "SkillRevision")
    component_model = apps.get_model("skills_app", "SkillComponent")
    last = 0
    while True:
        rows = list(
            revision_model.objects.filter(pk__gt=last)
            .order_by("pk")
            .values_list("pk", "name", "description", "frontmatter", "instruction_body")[:BATCH]
        )
        if not rows:
            return
        last = rows[-1][0]
        manifests = {pk: [] for pk, *_ in rows}
        for revision_pk, *resource in (
            component_model.objects.filter(revision_id__in=list(manifests))
            .order_by("revision_id", "logical_path")
            .values_list("revision_id", "logical_path", "type", "content_hash", "size", "media_type")
        ):
            manifests[revision_pk].append(tuple(resource))
        values = [
            (
                revision_tokens(
                    name=name,
                    description=description,
                    frontmatter=frontmatter or {},
                    instruction_body=body,
                    resources=manifests[pk],
                ),
                pk,
            )
            for pk, name, description, frontmatter, body in rows
        ]
        with schema_editor.connection.cursor() as cursor:
            cursor.executemany(f"UPDATE {TABLE} SET approx_tokens = %s WHERE id = %s", values)


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    _execute(schema_editor, ADD)
    _fill(apps, schema_editor)
    _execute(schema_editor, SEAL)


def backwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    _execute(schema_editor, REMOVE)


class Migration(migrations.Migration):
    dependencies = [("skills_app", "0011_review_conversations_workspace_tokens")]
    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(
                    model_name="skillrevision",
                    name="approx_tokens",
                    field=models.PositiveIntegerField(editable=False),
                ),
            ],
            database_operations=[migrations.RunPython(forwards, backwards)],
        ),
    ]
