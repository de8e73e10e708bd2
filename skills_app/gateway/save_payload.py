"""The JSON payload of a save (docs/contract.md §6) read at the door: ``POST /v1/skills/save``,
MCP's ``save_cloud_skill`` and the lint of §17 (``POST /v1/skills/lint``) all read it here.

The payload is untrusted: every field's type is checked here (a wrong one is a
``ValidationFailed`` naming the field, never a 500); product rules are ``skill_save``'s and the
domain's (``services/save.py``). The only validator of the payload: the contract's input schema
is pinned to ``save_input_shape`` by a test, so what agents read and what both doors check
cannot drift."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from skills_app.access import Actor, require_scope
from skills_app.domain.bundle import COMPONENT_TYPES, ComponentData, SavePayload, SkillBundle
from skills_app.domain.paths import guess_media_type
from skills_app.domain.text import unstorable_field
from skills_app.errors import ValidationFailed
from skills_app.models import SkillRevision

REQUIRED_TEXT = ("workspace", "slug", "name", "description", "instruction_body")
OPTIONAL_FIELDS = (
    "frontmatter",
    "components",
    "intent",
    "base_revision_id",
    "message",
    "acknowledge_secrets",
)
COMPONENT_FIELDS = ("logical_path", "type", "content", "encoding")
COMPONENT_REQUIRED = ("logical_path", "type", "content")
ENCODINGS = ("utf-8", "base64")
INTENTS = ("draft", "publish")  # checked by ``skill_save``, which imports share


def save_input_shape() -> dict[str, Any]:
    """The JSON Schema of the payload without its prose: what the checks below accept (the
    contract's ``save_cloud_skill`` input schema adds descriptions for agents)."""
    component = {
        "type": "object",
        "properties": {
            "logical_path": {"type": "string"},
            "type": {"type": "string", "enum": list(COMPONENT_TYPES)},
            "content": {"type": "string"},
            "encoding": {"type": "string", "enum": list(ENCODINGS), "default": ENCODINGS[0]},
        },
        "required": list(COMPONENT_REQUIRED),
        "additionalProperties": False,
    }
    properties: dict[str, Any] = {field: {"type": "string"} for field in REQUIRED_TEXT}
    properties.update(
        frontmatter={"type": "object"},
        components={"type": "array", "items": component},
        intent={"type": "string", "enum": list(INTENTS), "default": INTENTS[0]},
        base_revision_id={"type": "string"},
        message={"type": "string"},
        acknowledge_secrets={"type": "boolean", "default": False},
    )
    assert tuple(properties) == REQUIRED_TEXT + OPTIONAL_FIELDS
    return {
        "type": "object",
        "properties": properties,
        "required": list(REQUIRED_TEXT),
        "additionalProperties": False,
    }


def _invalid(field: str, problem: str) -> ValidationFailed:
    return ValidationFailed(f"'{field}' {problem}.", details={"field": field})


def _text(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise _invalid(field, "must be a string")
    return value


def reject_unstorable(fields: Mapping[str, Any]) -> None:
    """Raise ``ValidationFailed`` naming the first field (``frontmatter.key``,
    ``components[0].logical_path``, …) whose JSON value holds NUL or a lone surrogate anywhere,
    in a string or a key: no database can store it, so it is refused at the door."""
    problem = unstorable_field(fields, "")
    if problem:
        field, reason = problem
        raise _invalid(field, f"must be storable text: it {reason}")


def _unknown_field(payload: Mapping[str, Any], known: tuple[str, ...], where: str) -> None:
    unknown = sorted(str(key) for key in payload if key not in known)
    if unknown:
        raise ValidationFailed(
            f"Unknown field '{where}{unknown[0]}'; the fields are {', '.join(known)}.",
            details={"field": f"{where}{unknown[0]}"},
        )


def _component(item: Any, index: int) -> ComponentData:
    where = f"components[{index}]"
    if not isinstance(item, Mapping):
        raise _invalid(where, "must be an object with logical_path, type, content and encoding")
    _unknown_field(item, COMPONENT_FIELDS, f"{where}.")
    for field in COMPONENT_REQUIRED:
        if field not in item:
            raise _invalid(f"{where}.{field}", "is required")
    path = _text(item["logical_path"], f"{where}.logical_path")
    ctype = _text(item["type"], f"{where}.type")
    if ctype not in COMPONENT_TYPES:
        raise _invalid(f"{where}.type", f"must be one of {', '.join(COMPONENT_TYPES)}")
    encoding = item.get("encoding", "utf-8")
    if encoding not in ENCODINGS:
        raise _invalid(f"{where}.encoding", "must be 'utf-8' or 'base64'")
    content = item["content"]
    if not isinstance(content, str):
        raise _invalid(f"{where}.content", "must be a string")
    try:
        data = (
            base64.b64decode(content, validate=True)
            if encoding == "base64"
            else content.encode("utf-8")
        )
    except (binascii.Error, ValueError) as exc:
        raise _invalid(f"{where}.content", f"is not valid {encoding}") from exc
    return ComponentData(path, ctype, data, guess_media_type(path, data))


def _components(value: Any) -> tuple[ComponentData, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise _invalid("components", "must be a list of components (or omitted)")
    return tuple(_component(item, index) for index, item in enumerate(value))


def save_payload_read(
    *,
    actor: Actor,
    payload: Any,
    source: str = SkillRevision.Source.API,
    workspace_required: bool = True,
) -> SavePayload:
    """Check ``actor``'s ``skills:write`` scope, then the types of ``payload`` (the JSON body of
    docs/contract.md §6): the scope first, as every door answers.

    ``components`` omitted or null carries the base revision's components over; a list is the
    full new set. ``intent`` defaults to ``draft``. Raises ``ValidationFailed`` naming the
    first field of the wrong shape.
    """
    require_scope(actor, "skills:write")
    if not isinstance(payload, Mapping):
        raise ValidationFailed(
            "The save payload must be a JSON object.", details={"field": "payload"}
        )
    _unknown_field(payload, REQUIRED_TEXT + OPTIONAL_FIELDS, "")
    reject_unstorable(payload)
    required = [f for f in REQUIRED_TEXT if workspace_required or f != "workspace"]
    for field in required:
        if field not in payload:
            raise _invalid(field, "is required")
    text = {field: _text(payload[field], field) for field in required}
    # Required: as given (an empty name is a workspace nobody has, 404); optional: empty = none.
    workspace = text["workspace"] if workspace_required else payload.get("workspace") or None
    if workspace is not None:
        workspace = _text(workspace, "workspace")
    frontmatter = payload.get("frontmatter")
    if frontmatter is None:
        frontmatter = {}
    if not isinstance(frontmatter, Mapping):
        raise _invalid("frontmatter", "must be an object")
    intent = _text(payload.get("intent", INTENTS[0]), "intent")
    # Empty means "not given", as for every optional id.
    base_revision_id = payload.get("base_revision_id") or None
    if base_revision_id is not None:
        base_revision_id = _text(base_revision_id, "base_revision_id")
    bundle = SkillBundle(
        name=text["name"],
        description=text["description"],
        instruction_body=text["instruction_body"],
        frontmatter=dict(frontmatter),
        components=_components(payload.get("components")),
        source=source,
    )
    acknowledge = payload.get("acknowledge_secrets", False)
    if not isinstance(acknowledge, bool):
        raise _invalid("acknowledge_secrets", "must be true or false")
    return SavePayload(
        workspace=workspace,
        slug=text["slug"],
        bundle=bundle,
        intent=intent,
        base_revision_id=base_revision_id,
        message=_text(payload.get("message", ""), "message"),
        acknowledge_secrets=acknowledge,
    )
