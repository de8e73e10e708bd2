"""A shape read back from its annotations: each member as a ``Field``, the one reading both the
OpenAPI serializers (``api/serializers.py``) and the MCP ``outputSchema`` are built from."""

import types
import typing
from dataclasses import dataclass, replace
from typing import Any, Literal, NotRequired, Union, get_args, get_origin, get_type_hints

from skills_app.domain.shapes.fields import Doc, Format, Minimum, OneOf

Kind = Literal["str", "int", "float", "bool", "object", "map", "list", "shape", "const", "any"]
_SCALARS: dict[Any, Kind] = {str: "str", int: "int", float: "float", bool: "bool"}


@dataclass(frozen=True)
class Field:
    kind: Kind
    nullable: bool = False
    required: bool = True
    doc: str | None = None
    format: str | None = None
    minimum: int | None = None
    choices: tuple[str, ...] | None = None
    item: "Field | None" = None  # of a list or a map
    shape: type | None = None  # a nested shape
    const: str | None = None


def is_shape(hint: Any) -> bool:
    return typing.is_typeddict(hint)


def field_of(hint: Any) -> Field:
    """The ``Field`` an annotation describes."""
    meta: dict[str, Any] = {}
    if hint is Any:  # any JSON value (a job's result)
        return Field("any")
    if get_origin(hint) is NotRequired:
        return replace(field_of(get_args(hint)[0]), required=False)
    if get_origin(hint) is typing.Annotated:
        base, *extras = get_args(hint)
        for extra in extras:
            if isinstance(extra, Doc):
                meta["doc"] = extra.text
            elif isinstance(extra, Format):
                meta["format"] = extra.name
            elif isinstance(extra, Minimum):
                meta["minimum"] = extra.value
            elif isinstance(extra, OneOf):
                meta["choices"] = extra.values
        inner = field_of(base)
        return replace(inner, **{k: v for k, v in meta.items() if getattr(inner, k) is None})
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, types.UnionType) and type(None) in args:
        rest = [arg for arg in args if arg is not type(None)]
        if len(rest) != 1:
            raise TypeError(f"Only X | None unions are shapes' fields: {hint!r}")
        return replace(field_of(rest[0]), nullable=True)
    if origin is Literal and len(args) == 1:
        return Field("const", const=args[0])
    if origin is list:
        return Field("list", item=field_of(args[0]))
    if origin is dict:
        if args[1] is Any:
            return Field("object")
        return Field("map", item=field_of(args[1]))
    if is_shape(hint):
        return Field("shape", shape=hint)
    if hint in _SCALARS:
        return Field(_SCALARS[hint])
    raise TypeError(f"Not a shape's field type: {hint!r}")


def fields_of(shape: type) -> dict[str, Field]:
    """A shape's members in declared order (a base shape's first)."""
    return {
        name: field_of(hint) for name, hint in get_type_hints(shape, include_extras=True).items()
    }
