"""Arguments checked against a JSON Schema (Draft 2020-12), with errors that name the field:
an MCP tool's input schema, and a script manifest's ``schema`` (docs/contract.md §13).

A schema is a tenant's text, so checking it may touch no network and no file: validators get a
``referencing`` registry with no retrieval (only what the schema itself holds resolves), and a
``$ref`` or ``$dynamicRef`` that is not local to the schema (``#...``) is refused outright —
at save time and again when arguments are checked.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError, best_match
from referencing import Registry
from referencing.exceptions import Unresolvable

from skills_app.errors import ValidationFailed


def _field(error: ValidationError, prefix: str) -> str | None:
    """The argument an error is about, named as the services name fields
    (``components[0].type``), under ``prefix`` when one is given (``args.top``)."""
    parts = list(error.absolute_path)
    instance = error.instance
    if isinstance(instance, Mapping):
        if error.validator == "required":
            parts += [name for name in error.validator_value if name not in instance][:1]
        elif error.validator == "additionalProperties":
            allowed = error.schema.get("properties", {})
            parts += sorted(str(name) for name in instance if name not in allowed)[:1]
    name = prefix
    for part in parts:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    return name or None


_REF_KEYWORDS = ("$ref", "$dynamicRef")
# Nothing is ever retrieved: a reference the schema does not hold is Unresolvable.
_NO_RETRIEVAL: Registry[Any] = Registry()


def _foreign_ref(value: Any) -> str | None:
    """The first ``$ref``/``$dynamicRef`` in ``value`` that points outside the schema."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key in _REF_KEYWORDS and isinstance(item, str) and not item.startswith("#"):
                return item
            if (found := _foreign_ref(item)) is not None:
                return found
    elif isinstance(value, list):
        for item in value:
            if (found := _foreign_ref(item)) is not None:
                return found
    return None


def schema_refs_check(schema: Any, *, field: str, against: str = "the schema") -> None:
    """Refuse a schema that refers to anything but itself (a URL, a file, a relative URI): it
    would make the server fetch what a tenant names."""
    ref = _foreign_ref(schema)
    if ref is not None:
        raise ValidationFailed(
            f"{against[0].upper()}{against[1:]} refers to {ref[:200]!r}, outside itself; only "
            "local references ('#/$defs/...') are allowed, nothing is ever fetched.",
            details={"field": field},
        )


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str) -> Draft202012Validator:
    """The schema checked against the metaschema and compiled, once per distinct schema: the
    check walks the whole metaschema and costs far more than validating a call's arguments."""
    schema = json.loads(schema_json)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=_NO_RETRIEVAL)


def arguments_check(
    schema: Mapping[str, Any],
    arguments: Mapping[str, Any],
    *,
    against: str = "the tool's input schema",
    prefix: str = "",
    schema_field: str = "schema",
) -> None:
    """Raise ``ValidationFailed`` (naming the argument) if ``arguments`` break ``schema``.

    A schema that is itself broken, or refers to a document it does not hold (nothing is ever
    fetched), is a ``ValidationFailed`` naming ``schema_field``: it is the author's to fix.
    """
    schema_refs_check(schema, field=schema_field, against=against)
    try:
        validator = _validator(json.dumps(schema))
        error = best_match(validator.iter_errors(arguments))
    except (SchemaError, Unresolvable) as exc:
        raise ValidationFailed(
            f"{against[0].upper()}{against[1:]} is not a valid JSON Schema; fix it and save a "
            "new revision.",
            details={"field": schema_field},
        ) from exc
    if error is None:
        return
    field = _field(error, prefix)
    subject = f"The argument '{field}' does" if field else "The arguments do"
    raise ValidationFailed(
        f"{subject} not match {against}: {error.message}.",
        details={"field": field} if field else {},
    )
