"""The arguments of recall: their limits and the checks shared by the levels."""

from __future__ import annotations

from typing import TypedDict

from skills_app import errors
from skills_app.domain.limits import validate_slug

SEARCH_DEFAULT_LIMIT = 10
SEARCH_MAX_LIMIT = 50
QUERY_MAX_LENGTH = 1000
ARGUMENTS_MAX_LENGTH = 10_000
FALLBACKS = ("latest", "none")


class RecallArgs(TypedDict, total=False):
    """The arguments of ``recall_cloud_skill`` and ``GET /v1/recall`` (docs/contract.md §5)."""

    query: str | None
    slug: str | None
    workspace: str | None
    revision_id: str | None
    label: str | None
    resource: str | None
    arguments: str | None
    fallback: str | None
    limit: int | None


def _conflicting(a: str, b: str) -> errors.ValidationFailed:
    return errors.ValidationFailed(
        f"Give either '{a}' or '{b}', not both: one recall answers one level.",
        details={"fields": [a, b]},
    )


def _split_slug(slug: str | None, workspace: str | None) -> tuple[str | None, str]:
    """``WS/SLUG`` or ``SLUG`` (+ optional ``workspace``) → (workspace slug or None, slug)."""
    if not isinstance(slug, str) or not slug:
        raise errors.ValidationFailed("slug must not be empty.", details={"field": "slug"})
    ws_slug = workspace or None
    bare = slug
    if "/" in slug:
        qualifier, _, bare = slug.partition("/")
        if not qualifier or (ws_slug is not None and ws_slug != qualifier):
            raise errors.ValidationFailed(
                f"The slug '{slug}' names a different workspace than workspace='{ws_slug}'."
                if qualifier
                else "A qualified slug looks like WORKSPACE/SLUG.",
                details={"field": "slug"},
            )
        ws_slug = qualifier
    validate_slug(bare)
    return ws_slug, bare
