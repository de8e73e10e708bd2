"""What Level 0 reads of every skill it considers, kept in the skill's row (docs/search.md).

0031 keeps each skill's term statistics in its row (MAIN: read for each of a search's 100
candidates). With them there, a row with a body of any length was still over PostgreSQL's 2 KB
target, so the toaster moved the smaller values out as well, down to the skill's id: the head
a search tests for each match, and the ids, name and description of each answer, each then
read through the TOAST index (3 more pages per value). Kept in the row (MAIN), they leave it
only if it cannot fit a page at all. Existing rows are rewritten in batches, each committed on
its own (no long lock); the values are the same, so no trigger counts or stamps anything."""

from typing import Any

from django.db import migrations

INLINE = ("skill_id", "slug", "search_name", "search_description", "search_head")
BATCH = 2000


def _storage(kind: str) -> str:
    columns = ", ".join(f"ALTER COLUMN {column} SET STORAGE {kind}" for column in INLINE)
    return f"ALTER TABLE skills_app_skill {columns}"


def _inline(apps: Any, schema_editor: Any) -> None:
    """The storage, then each existing row written again with fresh copies of its values (an
    unchanged value would keep its pointer into TOAST); the head is generated from the
    statistics, so they are copied too."""
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(_storage("MAIN"))
        cursor.execute("SELECT coalesce(max(id), 0) FROM skills_app_skill")
        (last,) = cursor.fetchone()
        for start in range(0, last + 1, BATCH):
            cursor.execute(
                "UPDATE skills_app_skill SET skill_id = skill_id || '', slug = slug || '',"
                " search_name = search_name || '', search_description = search_description || '',"
                " search_terms = search_terms || '{}'::jsonb WHERE id >= %s AND id < %s",
                [start, start + BATCH],
            )


def _extended(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(_storage("EXTENDED"))


class Migration(migrations.Migration):
    # Each batch commits on its own: a large table is never locked for the whole rewrite.
    atomic = False

    dependencies = [("skills_app", "0031_search_bm25")]

    operations = [migrations.RunPython(_inline, _extended)]
