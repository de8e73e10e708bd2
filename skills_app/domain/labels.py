"""Labels (docs/contract.md §18): named pointers from a skill to one of its revisions, as MLflow
aliases and Langfuse labels — ``staging``, ``production``, ``canary``.

Pure rules only: what a label may be called, who may move one, and which revisions no label may
point at. The services (``services.labels``) apply them under the skill's row lock.
"""

from __future__ import annotations

import re

from skills_app import errors
from skills_app.domain.lifecycle import ADMIN_ROLES, DRAFT, REVIEW

LABEL_NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")
# The words recall already uses for its own resolutions (``resolved_by``): a label named so
# would read as something it is not.
RESERVED_LABELS = frozenset({"published", "latest"})
LABEL_SCOPE = REVIEW
LABEL_ROLES = ADMIN_ROLES


def validate_label_name(name: object, *, field: str = "name") -> str:
    """``name`` if it may name a label; else 400 naming ``field`` (the parameter it came in)."""
    if not isinstance(name, str) or not LABEL_NAME.fullmatch(name):
        raise errors.ValidationFailed(
            "A label name is 1-32 characters of a-z, 0-9 and '-', starting with a letter.",
            details={"field": field},
        )
    if name in RESERVED_LABELS:
        raise errors.ValidationFailed(
            f"'{name}' is reserved (it is how recall names its own resolutions); pick another "
            "label name.",
            details={"field": field, "reserved": sorted(RESERVED_LABELS)},
        )
    return name


def is_rejected(*, state: str, reviewed: bool) -> bool:
    """A rejected revision: one a reviewer sent back and nobody proposed again. Reject (and
    request_changes, reject named for what it asks) moves a revision from proposed to draft and
    records the review decision (``reviewed_at``); proposing it again moves it out of draft, and
    an approval publishes it, so a draft carrying a review decision is exactly a rejected one.
    Deprecated revisions are retired ones — a label may point at one to roll back to it."""
    return reviewed and state == DRAFT


def labels_movable(*, role: str | None, scopes: frozenset[str]) -> bool:
    """Whether a caller may move and remove labels: the ``LABEL_SCOPE`` and a ``LABEL_ROLES``
    role (the checks ``services.labels`` makes, asked beforehand for the console's buttons)."""
    return LABEL_SCOPE in scopes and role in LABEL_ROLES


def check_label_target(*, state: str, reviewed: bool) -> None:
    """Refuse a label onto a rejected revision (docs/contract.md §18)."""
    if is_rejected(state=state, reviewed=reviewed):
        raise errors.InvalidTransition(
            "This revision was rejected in review, and a label never points at a rejected "
            "revision: point it at another one, or get this one proposed and approved.",
            details={"state": state, "rejected": True},
        )
