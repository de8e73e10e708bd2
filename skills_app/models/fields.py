"""Model fields the product needs beyond Django's own."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models.expressions import Expression
from psycopg.types.json import Json


class OrderedJSONField(models.JSONField):
    """A JSONField whose mappings keep their key order on PostgreSQL too (docs/contract.md §3:
    frontmatter
    "values and key order as authored").

    Django stores JSONField as ``jsonb`` there, which reorders keys (shorter first); this field
    stores ``json``, the text as written, and reads it back with psycopg's own json loader,
    which keeps the order. SQLite keeps its text column. Nothing queries inside this column, so
    jsonb's operators are not missed.
    """

    def db_type(self, connection: BaseDatabaseWrapper) -> str | None:
        if connection.vendor == "postgresql":
            return "json"
        return super().db_type(connection)

    def get_db_prep_value(
        self, value: Any, connection: BaseDatabaseWrapper, prepared: bool = False
    ) -> Any:
        if connection.vendor != "postgresql":
            return super().get_db_prep_value(value, connection, prepared)
        if not prepared:
            value = self.get_prep_value(value)
        if value is None or isinstance(value, Expression):
            return value
        # Django's adapter would send a Jsonb, cast through jsonb and lose the order.
        return Json(value)

    def from_db_value(self, value: Any, expression: Any, connection: BaseDatabaseWrapper) -> Any:
        if value is not None and not isinstance(value, str):
            return value  # already decoded by psycopg's json loader, in the stored order
        return super().from_db_value(value, expression, connection)
