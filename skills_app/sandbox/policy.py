"""Who may run a script, and for how long (docs/contract.md §13, "Class gating").

Pure rules with no Django in them, so the REST view, the service and the task all ask the same
questions and get the same answers.
"""

from __future__ import annotations

import math

from skills_app.domain.lifecycle import ADMIN_ROLES, OWNER, ROLES
from skills_app.errors import PermissionDenied, ValidationFailed

DEFAULT_SCRIPT_CLASS = "safe"
SCRIPT_CLASSES = ("safe", "mutating", "dangerous")

# The roles that may run each class. "dangerous" additionally needs the workspace to allow it.
_ROLES_BY_CLASS: dict[str, frozenset[str]] = {
    "safe": frozenset(ROLES),
    "mutating": frozenset(ADMIN_ROLES),
    "dangerous": frozenset({OWNER}),
}
_WHO = {"safe": "members", "mutating": "admins and owners", "dangerous": "owners"}

DEFAULT_TIMEOUT_SECONDS = 30.0
DEFAULT_MAX_TIMEOUT_SECONDS = 120.0


def check_execution_allowed(
    *, script_class: str, role: str, has_execute_scope: bool, workspace_allows_dangerous: bool
) -> None:
    """Raise unless a caller with ``role`` may run a script of ``script_class``.

    ``safe``: any member with the ``skills:execute`` scope; ``mutating``: admins and owners;
    ``dangerous``: owners, and only where the workspace allows dangerous scripts. An unknown
    class is the manifest's fault (ValidationFailed); an unknown role is nobody's right.
    """
    roles = _ROLES_BY_CLASS.get(script_class)
    if roles is None:
        raise ValidationFailed(
            f"Unknown script class {script_class!r}; expected one of {', '.join(SCRIPT_CLASSES)}.",
            details={"class": script_class},
        )
    if not has_execute_scope:
        raise PermissionDenied("Running a script needs a token with the 'skills:execute' scope.")
    if role not in roles:
        raise PermissionDenied(
            f"A {script_class} script can only be run by workspace {_WHO[script_class]}.",
            details={"class": script_class, "role": role},
        )
    if script_class == "dangerous" and not workspace_allows_dangerous:
        raise PermissionDenied(
            "This workspace does not allow dangerous scripts to run.",
            details={"class": script_class},
        )


def resolve_timeout(frontmatter_timeout: object, cap: float = DEFAULT_MAX_TIMEOUT_SECONDS) -> float:
    """The wall-clock timeout in seconds for a script's ``timeout_seconds`` frontmatter value.

    Absent or 0 means the default of 30 s; every value, the default included, is capped at
    ``cap`` (the ``XMEMO_SANDBOX_MAX_TIMEOUT`` setting).
    """
    if not (math.isfinite(cap) and cap > 0):
        raise ValueError(f"The timeout cap must be a positive number of seconds, not {cap!r}.")
    if frontmatter_timeout is None:
        return min(DEFAULT_TIMEOUT_SECONDS, cap)
    # bool is an int subclass; `timeout_seconds: true` is a mistake, not one second.
    if isinstance(frontmatter_timeout, bool) or not isinstance(frontmatter_timeout, int | float):
        raise ValidationFailed(
            "timeout_seconds must be a number of seconds.",
            details={"key": "timeout_seconds", "value": repr(frontmatter_timeout)},
        )
    seconds = float(frontmatter_timeout)
    if not math.isfinite(seconds) or seconds < 0:
        raise ValidationFailed(
            "timeout_seconds must be a finite number of seconds, 0 or more.",
            details={"key": "timeout_seconds", "value": repr(frontmatter_timeout)},
        )
    return min(seconds or DEFAULT_TIMEOUT_SECONDS, cap)
