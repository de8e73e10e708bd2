"""The size and shape limits of docs/contract.md §3, checked on a whole bundle before anything is
stored.

``validate_bundle`` is the one gate every writer (console, REST, MCP, imports, restore) passes
through; each failure names the limit it broke so a person can fix the input.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from functools import partial

from skills_app.domain.bundle import COMPONENT_TYPES, ComponentData, SkillBundle
from skills_app.domain.evals import TRIGGERS_PATH, triggers_parse
from skills_app.domain.paths import (
    MAX_PATH_LENGTH,
    check_unique_paths,
    validate_logical_path,
    validate_media_type,
)
from skills_app.domain.skillmd import (
    DISPLAY_NAME_KEY,
    IDENTITY_KEYS,
    METADATA_KEY,
    RESERVED_KEYS,
    validate_frontmatter,
)
from skills_app.domain.text import control_character_reason, unstorable_reason
from skills_app.errors import (
    BodyTooLarge,
    ComponentTooLarge,
    TooManyComponents,
    ValidationFailed,
    XmemoError,
)

__all__ = [
    "DESCRIPTION_MAX",
    "MAX_BODY_BYTES",
    "MAX_COMPONENTS",
    "MAX_COMPONENT_BYTES",
    "MAX_FRONTMATTER_BYTES",
    "MAX_PATH_LENGTH",
    "NAME_MAX",
    "SLUG_MAX",
    "TOKEN_NAME_MAX",
    "bundle_checks",
    "collect_problems",
    "name_check",
    "slug_from_name",
    "validate_bundle",
    "validate_slug",
]

MAX_BODY_BYTES = 65_536
MAX_COMPONENTS = 50
MAX_COMPONENT_BYTES = 131_072
NAME_MAX = 200
DESCRIPTION_MAX = 1024
SLUG_MAX = 64
# A decision of docs/contract.md §3: without it the body limit could be dodged by moving text into
# frontmatter, which Level 1 returns in full. Measured as compact UTF-8 JSON, like the canonical
# document.
MAX_FRONTMATTER_BYTES = 65_536

_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_NOT_SLUG_CHARS = re.compile(r"[^a-z0-9]+")
_FALLBACK_SLUG = "skill"


def validate_slug(slug: str) -> str:
    """Return ``slug`` if it follows the Agent Skills name rule, else raise ValidationFailed."""
    if not isinstance(slug, str) or not 1 <= len(slug) <= SLUG_MAX or not _SLUG.fullmatch(slug):
        raise ValidationFailed(
            f"The slug {slug!r} is invalid: use 1 to {SLUG_MAX} characters of a-z, 0-9 and '-', "
            "with no leading, trailing or double hyphen.",
            details={"field": "slug", "limit": SLUG_MAX},
        )
    return slug


def slug_from_name(name: str) -> str:
    """A valid slug suggested by a display name ("Café Review!" → "cafe-review")."""
    ascii_name = "".join(
        ch for ch in unicodedata.normalize("NFKD", name.lower()) if not unicodedata.combining(ch)
    )
    slug = _NOT_SLUG_CHARS.sub("-", ascii_name).strip("-")
    slug = slug[:SLUG_MAX].rstrip("-")
    return slug or _FALLBACK_SLUG


def _validate_text(value: str, *, field: str, limit: int, what: str = "") -> None:
    if not isinstance(value, str) or not value.strip() or len(value) > limit:
        raise ValidationFailed(
            f"{what or f'The {field}'} must be 1 to {limit} characters and not blank.",
            details={"field": field, "limit": limit},
        )
    _utf8_size(value, field=field)


def name_check(value: str, *, field: str, limit: int, what: str) -> str:
    """``value`` if it is a name (of a skill, workspace or token): 1 to ``limit`` characters,
    not blank, storable, and no control character (docs/contract.md §16b) — else
    ValidationFailed naming ``field``. ``what`` starts the message ("A token name")."""
    _validate_text(value, field=field, limit=limit, what=what)
    reason = control_character_reason(value)
    if reason:
        raise ValidationFailed(
            f"{what} {reason}: a name is one line of plain, visible text.",
            details={"field": field},
        )
    return value


def _utf8_size(value: str, *, field: str) -> int:
    reason = unstorable_reason(value)
    if reason:
        raise ValidationFailed(f"The {field} {reason}.", details={"field": field})
    return len(value.encode("utf-8"))


def _check_name(bundle: SkillBundle) -> None:
    name_check(bundle.name, field="name", limit=NAME_MAX, what="The name")


def _check_description(bundle: SkillBundle) -> None:
    _validate_text(bundle.description, field="description", limit=DESCRIPTION_MAX)


def _check_slug(bundle: SkillBundle) -> None:
    if bundle.slug is not None:
        validate_slug(bundle.slug)


def _check_body(bundle: SkillBundle) -> None:
    body_size = _utf8_size(bundle.instruction_body, field="instruction_body")
    if body_size > MAX_BODY_BYTES:
        raise BodyTooLarge(
            f"The instruction body is {body_size:,} bytes of UTF-8; "
            f"the limit is {MAX_BODY_BYTES:,} bytes.",
            details={"limit": MAX_BODY_BYTES, "size": body_size},
        )


def _check_frontmatter(bundle: SkillBundle) -> None:
    metadata = bundle.frontmatter.get(METADATA_KEY)
    reserved = [key for key in RESERVED_KEYS if key in bundle.frontmatter]
    if isinstance(metadata, dict) and DISPLAY_NAME_KEY in metadata:
        reserved.append(f"{METADATA_KEY}.{DISPLAY_NAME_KEY}")
    if reserved:
        key = reserved[0]
        field = key if key in IDENTITY_KEYS else "name"
        raise ValidationFailed(
            f"The frontmatter must not hold {key!r}; send it as the {field} field.",
            details={"field": f"frontmatter.{key}"},
        )
    validate_frontmatter(bundle.frontmatter)
    frontmatter_size = len(
        json.dumps(bundle.frontmatter, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    )
    if frontmatter_size > MAX_FRONTMATTER_BYTES:
        raise ValidationFailed(
            f"The frontmatter is {frontmatter_size:,} bytes as JSON; "
            f"the limit is {MAX_FRONTMATTER_BYTES:,} bytes.",
            details={
                "field": "frontmatter",
                "limit": MAX_FRONTMATTER_BYTES,
                "size": frontmatter_size,
            },
        )


def _check_component_count(bundle: SkillBundle) -> None:
    count = len(bundle.components or ())
    if count > MAX_COMPONENTS:
        raise TooManyComponents(
            f"The revision has {count} components; the limit is {MAX_COMPONENTS}.",
            details={"limit": MAX_COMPONENTS, "count": count},
        )


def _check_component(component: ComponentData) -> None:
    path = validate_logical_path(component.logical_path)
    validate_media_type(component.media_type, path=path)
    if component.type not in COMPONENT_TYPES:
        raise ValidationFailed(
            f"Component {path!r} has the type {component.type!r}; "
            f"use one of {', '.join(COMPONENT_TYPES)}.",
            details={"field": "type", "path": path, "allowed": list(COMPONENT_TYPES)},
        )
    size = len(component.content)
    if size > MAX_COMPONENT_BYTES:
        raise ComponentTooLarge(
            f"Component {path!r} is {size:,} bytes; the limit is {MAX_COMPONENT_BYTES:,} bytes.",
            details={"path": path, "limit": MAX_COMPONENT_BYTES, "size": size},
        )
    if path == TRIGGERS_PATH:
        triggers_parse(component.content)


def bundle_checks(bundle: SkillBundle) -> Iterator[Callable[[], object]]:
    """Every rule of a bundle as one call each, in the order their errors are reported."""
    for check in (_check_name, _check_description, _check_slug, _check_body):
        yield partial(check, bundle)
    yield partial(_check_frontmatter, bundle)
    if bundle.components is None:  # carried over: checked when they were stored
        return
    yield partial(_check_component_count, bundle)
    for component in bundle.components:
        yield partial(_check_component, component)
    yield partial(check_unique_paths, (c.logical_path for c in bundle.components))


def collect_problems(checks: Iterable[Callable[[], object]]) -> list[XmemoError]:
    """Run every check, collecting what each raises instead of stopping at the first (lint,
    docs/contract.md §17)."""
    problems = []
    for check in checks:
        try:
            check()
        except XmemoError as problem:
            problems.append(problem)
    return problems


def validate_bundle(bundle: SkillBundle) -> None:
    """Raise the first broken rule of ``bundle``; components None (carried over) are skipped."""
    for check in bundle_checks(bundle):
        check()


MAX_WORKSPACE_NAME_LENGTH = 200
TOKEN_NAME_MAX = 100


def workspace_name_clean(name: str) -> str:
    """A workspace's display name, trimmed: a name of 1 to 200 characters."""
    return name_check(
        name.strip(), field="name", limit=MAX_WORKSPACE_NAME_LENGTH, what="A workspace name"
    )
