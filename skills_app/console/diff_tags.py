"""Template filters that lay a diff's pairs out as numbered lines (``{% load diff_rows %}``,
registered in the settings' TEMPLATES): ``rows`` for the inline view, ``side_rows`` for side
by side, where a changed block's old and new lines face each other."""

from __future__ import annotations

from itertools import zip_longest

from django import template

from skills_app.domain.diff import EQUAL, INSERT, DiffRow, diff_rows

register = template.Library()


@register.filter
def rows(ops: list[dict[str, str]]) -> list[DiffRow]:
    return diff_rows([(op["op"], op["text"]) for op in ops])


@register.filter
def side_rows(ops: list[dict[str, str]]) -> list[tuple[DiffRow | None, DiffRow | None]]:
    pairs: list[tuple[DiffRow | None, DiffRow | None]] = []
    removed: list[DiffRow] = []
    added: list[DiffRow] = []

    def flush() -> None:
        pairs.extend(zip_longest(removed, added))
        removed.clear()
        added.clear()

    for row in rows(ops):
        if row.kind == EQUAL:
            flush()
            pairs.append((row, row))
        else:
            (added if row.kind == INSERT else removed).append(row)
    flush()
    return pairs
