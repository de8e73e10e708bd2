"""Typed reads of the environment for ``xmemo/settings.py``.

A value that cannot be read as its setting needs stops the process at start-up with
``ImproperlyConfigured`` naming the variable and what it expected, never a bare ``ValueError``
nor a typo silently read as "off". Our own small reader rather than django-environ: the
settings need few types, plus two it lacks in this form (a secret read from ``NAME_FILE``, as
Docker and Kubernetes mount them, and a rate checked by the rate limiter's own grammar)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from django.core.exceptions import ImproperlyConfigured

from skills_app.domain.rates import rate_parse

T = TypeVar("T")

TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"0", "false", "no", "off"})


def _bad(name: str, value: str, expected: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"{name}={value!r}: expected {expected}.")


def _typed(name: str, default: T, parse: Callable[[str], T], expected: str) -> T:
    """``default`` when ``name`` is unset or empty, else ``parse(value)``; a value ``parse``
    refuses (ValueError) is reported as ``name`` expecting ``expected``."""
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        return parse(value)
    except ValueError:
        raise _bad(name, value, expected) from None


def env_str(name: str, default: str = "") -> str:
    """The value as it is set, the empty string included (an empty rate limit means none)."""
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    """1/true/yes/on or 0/false/no/off, in any case; unset or empty: ``default``."""

    def parse(value: str) -> bool:
        word = value.lower()
        if word in TRUE:
            return True
        if word in FALSE:
            return False
        raise ValueError(value)

    return _typed(name, default, parse, "a boolean (1/true/yes/on or 0/false/no/off)")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    def parse(value: str) -> int:
        number = int(value)
        if minimum is not None and number < minimum:
            raise ValueError(value)
        return number

    floor = "" if minimum is None else f" of at least {minimum}"
    return _typed(name, default, parse, f"a whole number{floor}")


def env_float(name: str, default: float, *, what: str = "a number") -> float:
    return float(_typed(name, default, float, what))


def env_seconds(name: str, default: float) -> float:
    """A duration in seconds, zero or more."""

    def parse(value: str) -> float:
        seconds = float(value)
        if not seconds >= 0:  # negative or NaN
            raise ValueError(value)
        return seconds

    return float(_typed(name, default, parse, "a number of seconds (0 or more)"))


def env_list(name: str, default: str) -> list[str]:
    """Comma-separated items, blanks dropped; set but empty: no items."""
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_path(name: str, default: Path) -> Path:
    return Path(os.environ.get(name) or default)


def env_rate(name: str, default: str) -> str:
    """A rate limit such as ``6000/min`` (per s, min, h or d); set but empty: no limit."""
    value = os.environ.get(name, default)
    try:
        rate_parse(value)
    except ValueError:
        raise _bad(
            name, value, "a rate such as 6000/min (a count per s, min, h or d), or empty"
        ) from None
    return value


def env_secret(name: str, default: str = "") -> str:
    """A secret from the file named by NAME_FILE (Docker and Kubernetes secrets), else from NAME.
    An unreadable file names its variable; the secret itself is never shown."""
    path = os.environ.get(f"{name}_FILE")
    if path:
        try:
            return Path(path).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ImproperlyConfigured(
                f"{name}_FILE={path!r}: expected a readable UTF-8 file ({exc.__class__.__name__})."
            ) from None
    return os.environ.get(name, default)


def stored_secret(path: Path, *, initial: str = "") -> str:
    """The secret kept in ``path`` (mode 0600), written once — ``initial`` or a new random
    one — by whichever process gets there first, so a restart finds the same value."""
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        pass
    draft = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write((initial or secrets.token_urlsafe(50)) + "\n")
    try:
        os.link(draft, path)  # never replaces a secret another process wrote meanwhile
    except FileExistsError:
        pass
    finally:
        draft.unlink()
    return path.read_text(encoding="utf-8").strip()
