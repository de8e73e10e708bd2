"""Skills as commands (docs/contract.md §18): a skill whose frontmatter says
``invoke: {user: true}`` is a slash command — over MCP, a prompt.

Pure rules: whether a frontmatter makes a command, which arguments the command takes, and the
one argument string its arguments make for the renderer (§11), so that a prompt's text is
byte-equal to Level 1's ``rendered_body`` for that string.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

# The one argument of a command that declares no ``argument-names``: the whole string.
ARGUMENTS = "ARGUMENTS"


def is_command(frontmatter: Mapping[str, Any] | None) -> bool:
    invoke = (frontmatter or {}).get("invoke")
    return isinstance(invoke, Mapping) and invoke.get("user") is True


def declared_arguments(frontmatter: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The names in ``argument-names`` (validated on save as a list of names), in order."""
    names = (frontmatter or {}).get("argument-names")
    if not isinstance(names, list):
        return ()
    return tuple(name for name in names if isinstance(name, str) and name)


def argument_string(declared: tuple[str, ...], values: Mapping[str, str] | None) -> str:
    """``ARGUMENTS`` as given, or the declared names' values in ``argument-names`` order, each
    shell-quoted (``shlex.quote``) and joined by single spaces.

    A declared name left out counts as empty (``''``) where a later one is given, so every value
    keeps its position ($1, $2 …); the ones left out at the end are dropped, as a user who types
    fewer words would expect.
    """
    given = dict(values or {})
    if not declared:
        return given.get(ARGUMENTS, "")
    present = [name for name in declared if name in given]
    if not present:
        return ""
    last = max(declared.index(name) for name in present)
    return " ".join(shlex.quote(given.get(name, "")) for name in declared[: last + 1])


def unknown_arguments(declared: tuple[str, ...], values: Mapping[str, str] | None) -> list[str]:
    accepted = set(declared) if declared else {ARGUMENTS}
    return sorted(set(values or {}) - accepted)
