"""The embedded default's database backend: Django's SQLite backend with one change, to flush.

On SQLite the component delete guard (migration 0007) lets a component row go only once its
revision is gone or marked for purging. ``manage.py flush`` (and pytest-django between
transactional tests) empties every table with one ``DELETE`` each, in the order of a Python set
— a different order in every process — so whenever the components came before the revisions the
flush was refused. Here the components' ``DELETE`` runs last; foreign keys on SQLite are
deferred to the end of the flush's transaction, so the order is otherwise free. PostgreSQL
flushes with ``TRUNCATE``, which row triggers do not see.
"""

from __future__ import annotations

from typing import Any

from django.db.backends.sqlite3 import base, operations

GUARDED_TABLE = "skills_app_skillcomponent"


class DatabaseOperations(operations.DatabaseOperations):
    def sql_flush(self, style: Any, tables: Any, **kwargs: Any) -> list[str]:
        statements: list[str] = super().sql_flush(style, tables, **kwargs)
        # The quoted name appears only in that table's DELETE (sequence resets name tables as
        # string literals); the sort is stable, so everything else keeps its place.
        guarded = self.quote_name(GUARDED_TABLE)
        return sorted(statements, key=lambda sql: guarded in sql)


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
