"""Which skills Level 0 may show a caller: the one gate every search path goes through.

Lexical candidates are found under it, and every candidate, whichever path found it (words or
vectors), is fetched again under it before it is answered (``search.descriptors``). A vector
index may be stale or hold skills of other workspaces; what it proposes is never shown unless
this gate lets it through now.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection

from skills_app.access import Actor, readable_workspace_sql
from skills_app.domain.lifecycle import LATEST_FALLBACK_KINDS
from skills_app.infra import db
from skills_app.models import Workspace

_WS = Workspace._meta.db_table


@dataclass(frozen=True)
class Gate:
    """The readable, switched-on workspaces of one search and what may be shown of them."""

    workspace_ids: tuple[int, ...]
    # Workspaces whose unreviewed current revision may be shown (docs/contract.md §5): the
    # others show a skill only through its published revision.
    fallback_ids: tuple[int, ...]
    # Tokens are agents: a skill marked ``invoke: {model: false}`` is for people only.
    agents_only: bool
    # A trigger check's skill (docs/contract.md §22): shown whatever its state, since the
    # revision being checked stands in for it (``services.evals``).
    stand_in: int | None = None

    def sql(self, alias: str = "s") -> tuple[str, list[Any]]:
        """The condition on a skills row ``alias``."""
        readable, readable_params = member_sql(f"{alias}.workspace_id", self.workspace_ids)
        fallback, fallback_params = member_sql(f"{alias}.workspace_id", self.fallback_ids)
        served = (
            f"{alias}.status = 'active' AND {alias}.current_revision_id IS NOT NULL"
            f" AND ({alias}.published_revision_id IS NOT NULL OR {fallback})"
        )
        if self.stand_in is not None:
            served = f"({alias}.id = %s OR ({served}))"
            fallback_params = [self.stand_in, *fallback_params]
        return (
            f"{readable} AND {served}"
            + (f" AND {alias}.model_invocable" if self.agents_only else ""),
            [*readable_params, *fallback_params],
        )


def member_sql(column: str, values: tuple[int, ...]) -> tuple[str, list[Any]]:
    """``column`` is one of ``values``: one array parameter on PostgreSQL (the statement text
    stays the same, whatever the number), a list on SQLite."""
    if connection.vendor == "postgresql":
        return f"{column} = ANY(%s)", [list(values)]
    if not values:
        return "1 = 0", []
    return f"{column} IN ({', '.join(['%s'] * len(values))})", list(values)


def served_gate(*, workspace: Workspace, stand_in: int | None = None) -> Gate:
    """What Level 0 shows the agents of ``workspace`` alone (a token restricted to it), with
    ``stand_in``'s skill shown whatever its state (trigger checks, docs/contract.md §22)."""
    fallback = (workspace.pk,) if workspace.kind in LATEST_FALLBACK_KINDS else ()
    return Gate(
        workspace_ids=(workspace.pk,), fallback_ids=fallback, agents_only=True, stand_in=stand_in
    )


def gate_for(*, actor: Actor, workspace: Workspace | None) -> Gate:
    access_sql, params = readable_workspace_sql(actor, "w.id")
    sql = f"SELECT w.id, w.kind FROM {_WS} w WHERE w.cloud_skills_enabled AND {access_sql}"  # noqa: S608 - names only
    if workspace is not None:
        sql += " AND w.id = %s"
        params = [*params, workspace.pk]
    rows = db.fetch_all(sql, params)
    return Gate(
        workspace_ids=tuple(ws for ws, _ in rows),
        fallback_ids=tuple(ws for ws, kind in rows if kind in LATEST_FALLBACK_KINDS),
        agents_only=actor.token is not None,
    )
