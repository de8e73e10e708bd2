"""Reads of workspace secrets: names and dates for people, values only for the sandbox."""

from __future__ import annotations

from collections.abc import Iterable

from skills_app.access import Actor, require_workspace_admin
from skills_app.domain import shapes
from skills_app.infra.crypto import secret_decrypt
from skills_app.models import Workspace, WorkspaceSecret
from skills_app.selectors.pagination import Page, paginate


def secret_as_dict(secret: WorkspaceSecret) -> shapes.Secret:
    """What anyone is ever shown of a secret: never its value."""
    return {
        "name": secret.name,
        "created_at": secret.created_at.isoformat(),
        "updated_at": secret.updated_at.isoformat(),
    }


def secret_list(
    *, actor: Actor, workspace: Workspace, cursor: str | None = None, limit: int = 50
) -> Page[shapes.Secret]:
    require_workspace_admin(actor, workspace)
    return paginate(
        WorkspaceSecret.objects.filter(workspace=workspace).defer("ciphertext"),
        kind=f"secrets:{workspace.slug}",
        order=[("name", False)],
        cursor=cursor,
        limit=limit,
        serialize=secret_as_dict,
    )


def script_environment(*, workspace: Workspace, names: Iterable[str]) -> dict[str, str]:
    """The environment of a script of ``workspace`` whose manifest names ``names`` (docs/contract.md
    §13):
    each name that is one of the workspace's secrets, with its value. Nothing else — names with
    no secret are left out, and no value ever comes from the worker's own environment."""
    wanted = [name for name in names if isinstance(name, str)]
    rows = WorkspaceSecret.objects.filter(workspace=workspace, name__in=wanted)
    return {row.name: secret_decrypt(row.ciphertext, name=row.name) for row in rows}
