"""A shape as JSON Schema (2020-12): the ``outputSchema`` of the MCP tools (docs/contract.md
§18). Nested shapes are written inline; a free-form object is ``{"type": "object"}``."""

from typing import Any

from skills_app.domain.shapes.reading import Field, fields_of

_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}


def _field_schema(field: Field) -> dict[str, Any]:
    schema: dict[str, Any]
    if field.kind == "const":
        schema = {"type": "string", "enum": [field.const]}
    elif field.kind == "shape":
        assert field.shape is not None
        schema = shape_schema(field.shape)
    elif field.kind == "list":
        assert field.item is not None
        schema = {"type": "array", "items": _field_schema(field.item)}
    elif field.kind == "map":
        assert field.item is not None
        schema = {"type": "object", "additionalProperties": _field_schema(field.item)}
    elif field.kind == "object":
        schema = {"type": "object"}
    elif field.kind == "any":
        schema = {}
    else:
        schema = {"type": _TYPES[field.kind]}
    if field.choices is not None:
        schema["enum"] = list(field.choices)
    if field.format is not None:
        schema["format"] = field.format
    if field.minimum is not None:
        schema["minimum"] = field.minimum
    if field.doc is not None:
        schema["description"] = field.doc
    if field.nullable:
        if "enum" in schema:
            schema["enum"] = [*schema["enum"], None]
        schema = {"anyOf": [schema, {"type": "null"}]}
    return schema


def shape_schema(shape: type) -> dict[str, Any]:
    """``shape`` as a JSON Schema object: its members, those required, its docstring."""
    fields = fields_of(shape)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: _field_schema(field) for name, field in fields.items()},
        "required": [name for name, field in fields.items() if field.required],
    }
    doc = (shape.__doc__ or "").strip()
    if doc and shape.__doc__ != dict.__doc__:
        schema["description"] = " ".join(doc.split())
    return schema
