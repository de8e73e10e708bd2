"""Raw SQL that only PostgreSQL runs (triggers, generated columns, indexes); the embedded
default (SQLite) does the same in Python or does without. Not a migration: Django's loader
skips modules whose names start with an underscore."""

from collections.abc import Callable, Sequence
from typing import Any

from django.db import migrations


def run_on_postgresql(up: Sequence[str], down: Sequence[str]) -> migrations.RunPython:
    """A RunPython operation that executes ``up`` (``down`` when reversed) on PostgreSQL."""

    def run(statements: Sequence[str]) -> Callable[[Any, Any], None]:
        def operation(apps: Any, schema_editor: Any) -> None:
            if schema_editor.connection.vendor != "postgresql":
                return
            with schema_editor.connection.cursor() as cursor:
                for sql in statements:
                    cursor.execute(sql)

        return operation

    return migrations.RunPython(run(up), run(down))
