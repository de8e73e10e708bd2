"""Workspace secrets (docs/contract.md §2, §13): the shape of a name and a value, which runs
receive them, and their masking.

A secret's name is the environment variable a script receives it under, so it follows the
same rule as a manifest's ``env_allow`` entries.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from skills_app.domain.lifecycle import PERSONAL, PUBLISHED
from skills_app.domain.text import unstorable_reason
from skills_app.errors import ValidationFailed

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_SECRET_NAME_LENGTH = 128
MAX_SECRET_VALUE_BYTES = 65_536


def validate_secret_name(name: str) -> None:
    if len(name) > MAX_SECRET_NAME_LENGTH or not ENV_NAME.fullmatch(name):
        raise ValidationFailed(
            "A secret's name is an environment variable name: letters, digits and '_', not "
            f"starting with a digit, at most {MAX_SECRET_NAME_LENGTH} characters.",
            details={"field": "name"},
        )


def validate_secret_value(value: object) -> str:
    """The value as a string, or ValidationFailed: an environment holds text without NUL."""
    if not isinstance(value, str):
        raise ValidationFailed("A secret's value must be a string.", details={"field": "value"})
    reason = unstorable_reason(value)
    if reason is not None:
        # An environment can carry neither NUL nor text that is not valid Unicode.
        raise ValidationFailed(
            f"A secret's value cannot be stored: it {reason}.", details={"field": "value"}
        )
    size = len(value.encode("utf-8"))
    if size > MAX_SECRET_VALUE_BYTES:
        raise ValidationFailed(
            f"A secret's value is limited to {MAX_SECRET_VALUE_BYTES} bytes of UTF-8.",
            details={"field": "value", "limit": MAX_SECRET_VALUE_BYTES},
        )
    return value


MASK = "***"


def secrets_reach(*, workspace_kind: str, revision_state: str) -> bool:
    """Whether a run of a revision in this state receives the workspace's secrets: in a team
    only the published revision (it passed review), never a draft, proposal or deprecated one,
    whoever runs it; in a personal workspace every revision, all of them its one member's."""
    return workspace_kind == PERSONAL or revision_state == PUBLISHED


def secrets_masked(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` (text, or JSON-like data, keys included) with every occurrence of each secret
    replaced by ``***``, as CI systems mask secrets in logs. The longest secrets go first, so a
    secret holding another is masked whole."""
    ordered = sorted({secret for secret in secrets if secret}, key=len, reverse=True)
    if not ordered:
        return value

    def mask(item: Any) -> Any:
        if isinstance(item, str):
            for secret in ordered:
                item = item.replace(secret, MASK)
            return item
        if isinstance(item, dict):
            return {mask(k): mask(v) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [mask(element) for element in item]
        return item

    return mask(value)
