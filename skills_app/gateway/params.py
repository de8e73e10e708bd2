"""The one check of a query-string or path parameter, for every view that reads them.

PostgreSQL text cannot hold NUL and no parameter needs more than ``MAX_PARAM_LENGTH``
characters: refused at the door, naming the parameter, rather than failing in the database.
"""

from __future__ import annotations

from skills_app import errors
from skills_app.domain.text import unstorable_reason

MAX_PARAM_LENGTH = 2000


def check_param(name: str, value: str, *, limit: int = MAX_PARAM_LENGTH) -> str:
    """``value``, or ValidationFailed (400) when it cannot be stored or is over ``limit``."""
    if unstorable_reason(value) is not None or len(value) > limit:
        raise errors.ValidationFailed(
            f"The parameter '{name}' holds a NUL character or is too long.",
            details={"field": name},
        )
    return value
