"""One selector per console page, each answering the page's view model (a frozen dataclass)."""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


def page_fields(page: DataclassInstance) -> dict[str, Any]:
    """A view model's fields by name: a template's names, or the start of a page extending it."""
    return {f.name: getattr(page, f.name) for f in fields(page)}
