"""The bodies of the MCP tools: the selectors and services REST calls, and nothing else.

A tool body is a plain synchronous function of ``(actor, arguments)`` returning exactly the
JSON its REST twin sends (``GET /v1/recall``, ``POST /v1/skills/save``). ``tool_run`` is the
one entry: it applies the REST rate limit, the token scope the contract names and the
contract's input schema, then runs the body. Failures are ``skills_app.errors`` exceptions,
which the server reports as tool errors carrying the REST error envelope.

``execute_cloud_skill`` has no body here on purpose: it is REST-only (SPEC §12, §13), so no
contract, however edited, can make the MCP server run it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from ..access import Actor, require_scope
from ..api.throttling import check_rate
from ..errors import ValidationFailed
from ..models import SkillRevision
from ..selectors.recall import recall
from ..services.save_payload import reject_unstorable, save_from_payload
from .contract import tool_spec

ToolBody = Callable[[Actor, dict[str, Any]], dict[str, Any]]


def _recall(actor: Actor, arguments: dict[str, Any]) -> dict[str, Any]:
    return recall(actor=actor, **arguments)


def _save(actor: Actor, arguments: dict[str, Any]) -> dict[str, Any]:
    return save_from_payload(actor=actor, payload=arguments, source=SkillRevision.Source.MCP)


SERVED_TOOLS: Mapping[str, ToolBody] = {
    "recall_cloud_skill": _recall,
    "save_cloud_skill": _save,
}


def _field(error: ValidationError) -> str | None:
    """The argument an input-schema error is about, named as the services name fields
    (``components[0].type``)."""
    parts = list(error.absolute_path)
    instance = error.instance
    if isinstance(instance, Mapping):
        if error.validator == "required":
            parts += [name for name in error.validator_value if name not in instance][:1]
        elif error.validator == "additionalProperties":
            allowed = error.schema.get("properties", {})
            parts += sorted(str(name) for name in instance if name not in allowed)[:1]
    name = ""
    for part in parts:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name or None


def arguments_check(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> None:
    """Raise ``ValidationFailed`` (naming the argument) if ``arguments`` break ``schema``."""
    error = best_match(Draft202012Validator(schema).iter_errors(arguments))
    if error is None:
        return
    field = _field(error)
    subject = f"The argument '{field}' does" if field else "The arguments do"
    raise ValidationFailed(
        f"{subject} not match the tool's input schema: {error.message}.",
        details={"field": field} if field else {},
    )


def tool_run(*, name: str, actor: Actor, arguments: dict[str, Any]) -> dict[str, Any]:
    """Run one served tool for ``actor``; the caller has checked the profile exposes it.

    The same gates as the REST door, in the same order: the per-token rate limit, the scope,
    then the input (shape, and no NUL characters, which the database cannot store).
    """
    check_rate(actor.token, actor.user)
    spec = tool_spec(name)
    require_scope(actor, spec["scope"])
    arguments_check(spec["input_schema"], arguments)
    reject_unstorable(arguments)
    return SERVED_TOOLS[name](actor, arguments)
