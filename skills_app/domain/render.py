"""The one body renderer (docs/contract.md §11): console argument preview and Level 1 ``arguments``.

One pass: a regular expression walks the original body once and each match is replaced by a
function of that match alone, so substituted text is never scanned again (an argument holding
``$1`` arrives literally) and an argument is never spliced into ``!`…``` or ``@path``. A ``$``
word is the whole identifier after it (``$ARGUMENTSX`` stays as written; ``$10`` is the tenth
argument). The output stops at ``MAX_RENDERED_BYTES`` (docs/contract.md §5), counted as it
goes: arguments repeated many times could grow a 64 KiB body to hundreds of megabytes. Unknown
``${XMEMO_…}`` names render empty (never the process environment), with a warning each."""

from __future__ import annotations

import logging
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict

from skills_app.errors import RenderedTooLarge

logger = logging.getLogger(__name__)

MAX_RENDERED_BYTES = 262_144
CONTEXT_VARIABLES = ("XMEMO_SKILL_ID", "XMEMO_REVISION_ID", "XMEMO_WORKSPACE")
UNKNOWN_CONTEXT_VARIABLE = "UNKNOWN_CONTEXT_VARIABLE"


class RenderWarning(TypedDict):
    """The shape of the lint's warnings (docs/contract.md §17): code, field, message."""

    code: str
    field: str
    message: str


@dataclass(frozen=True)
class Rendered:
    text: str
    warnings: tuple[RenderWarning, ...]


_TOKEN = re.compile(
    r"\$\{(?P<context>XMEMO_[A-Za-z0-9_]*)\}"
    r"|\$(?P<index>[0-9]+)"
    r"|\$(?P<word>[A-Za-z_][A-Za-z0-9_]*)"
    r"|!`(?P<command>[^`\n]+)`"
    r"|(?<!\S)@(?P<path>\S+)"
)


def tokenize_arguments(arguments: str) -> list[str]:
    """Shell-style positional arguments; unbalanced quotes fall back to splitting on spaces."""
    try:
        return shlex.split(arguments, posix=True)
    except ValueError:
        return arguments.split()


def _unknown_context(name: str) -> RenderWarning:
    return {
        "code": UNKNOWN_CONTEXT_VARIABLE,
        "field": "instruction_body",
        "message": f"${{{name}}} is not a context variable and was left empty; the known ones "
        f"are {', '.join(CONTEXT_VARIABLES)}.",
    }


def render_body(
    body: str,
    *,
    arguments: str,
    argument_names: Sequence[str] = (),
    context: Mapping[str, str] | None = None,
) -> str:
    """The rendered text alone (see ``render`` for its warnings)."""
    return render(body, arguments=arguments, argument_names=argument_names, context=context).text


def render(
    body: str,
    *,
    arguments: str,
    argument_names: Sequence[str] = (),
    context: Mapping[str, str] | None = None,
) -> Rendered:
    """Render ``body`` in one pass; the warnings name each unknown ``${XMEMO_…}`` once."""
    positional = tokenize_arguments(arguments)
    named = {name: index for index, name in enumerate(argument_names, start=1)}
    known_context = {name: (context or {}).get(name, "") for name in CONTEXT_VARIABLES}

    def argument(index: int) -> str:
        if index == 0:
            return arguments
        return positional[index - 1] if index <= len(positional) else ""

    def replace(match: re.Match[str]) -> str:
        kind = match.lastgroup
        value = match.group(kind) if kind else ""
        if kind == "context":
            if value not in known_context:
                unknown.setdefault(value, _unknown_context(value))
            return known_context.get(value, "")
        if kind == "index":
            return argument(int(value))
        if kind == "word":
            if value == "ARGUMENTS":
                return arguments
            if value == "ARG_COUNT":
                return str(len(positional))
            if value in named:
                return argument(named[value])
            return match.group(0)
        if kind == "command":
            return f"Bash({value})"
        return f"Read({value})"

    unknown: dict[str, RenderWarning] = {}
    pieces: list[str] = []
    size = 0

    def emit(text: str) -> None:
        nonlocal size
        size += len(text.encode("utf-8", "surrogatepass"))
        if size > MAX_RENDERED_BYTES:
            raise RenderedTooLarge(
                f"The body rendered with these arguments would be larger than "
                f"{MAX_RENDERED_BYTES:,} bytes (256 KiB); pass shorter arguments, or read "
                "instruction_body without arguments.",
                details={"field": "arguments", "limit": MAX_RENDERED_BYTES},
            )
        pieces.append(text)

    position = 0
    for match in _TOKEN.finditer(body):
        emit(body[position : match.start()])
        emit(replace(match))
        position = match.end()
    emit(body[position:])
    if unknown:
        logger.warning("unknown context variables left empty: %s", ", ".join(unknown))
    return Rendered("".join(pieces), tuple(unknown.values()))
