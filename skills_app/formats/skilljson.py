"""A ``skill.json`` subprocess manifest → a bundle (docs/contract.md §8, "skill.json").

The manifest becomes a skill whose entry executable is a ``script`` component and whose
manifest fields live on in frontmatter (every field but ``name``/``description``, which are
columns, and unknown fields too, verbatim). The instruction body is generated from the
manifest: it tells an agent how to call the script (wire protocol, class, timeout, arguments).
Absent optional fields are not written into frontmatter, so the import stays lossless; their
defaults (class ``safe``, category ``external``, timeout 30 s, no environment) apply where they
are used and are spelled out in the body.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from skills_app.domain.bundle import SkillBundle
from skills_app.domain.limits import validate_bundle, validate_slug
from skills_app.domain.paths import validate_logical_path
from skills_app.domain.secrets import ENV_NAME
from skills_app.domain.skillmd import IDENTITY_KEYS, SCRIPT_CLASSES
from skills_app.errors import InvalidPath, ValidationFailed
from skills_app.formats.files import component_build, load_json_object, located

DEFAULT_CLASS = "safe"
DEFAULT_CATEGORY = "external"
DEFAULT_TIMEOUT_SECONDS = 30

_NAME = re.compile(r"[a-z0-9_]+")
_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
_CLASS_MEANING = {
    "safe": "read-only, no side effects on any system",
    "mutating": "creates or changes state; reversible",
    "dangerous": "irreversible (deletes, restarts, runs arbitrary commands)",
}


def _field_error(filename: str, field: str, problem: str) -> ValidationFailed:
    return ValidationFailed(
        f"{filename}: the field {field!r} {problem}.", details={"path": filename, "field": field}
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_nonblank(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _valid_name(value: Any) -> bool:
    if not (isinstance(value, str) and _NAME.fullmatch(value)):
        return False
    try:
        validate_slug(value.replace("_", "-"))
    except ValidationFailed:
        return False
    return True


def _valid_entry(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        validate_logical_path(value)
    except InvalidPath:
        return False
    return True


def _valid_schema(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type", "object") == "object"


# (field, required, accepts, what it must be)
_RULES: tuple[tuple[str, bool, Callable[[Any], bool], str], ...] = (
    (
        "name",
        True,
        _valid_name,
        "must be lower_snake [a-z0-9_]+ of at most 64 characters, without a leading, trailing "
        "or doubled '_' (its slug is the name with '_' turned into '-')",
    ),
    ("description", True, _is_nonblank, "must be a non-blank string"),
    ("schema", False, _valid_schema, "must be a JSON Schema object with type 'object'"),
    (
        "entry",
        True,
        _valid_entry,
        "must be the relative path of the executable next to skill.json (no '..', no leading "
        "'/', no '\\\\')",
    ),
    (
        "env_allow",
        False,
        lambda v: (
            isinstance(v, list) and all(isinstance(n, str) and ENV_NAME.fullmatch(n) for n in v)
        ),
        "must be a list of environment variable names",
    ),
    (
        "timeout_seconds",
        False,
        lambda v: _is_int(v) and v >= 0,
        "must be an integer >= 0 (0 = 30 s)",
    ),
    ("class", False, lambda v: v in SCRIPT_CLASSES, "must be one of " + ", ".join(SCRIPT_CLASSES)),
    ("category", False, _is_nonblank, "must be a non-blank string"),
)


def _validate(manifest: Mapping[str, Any], filename: str) -> None:
    for field, required, accepts, expected in _RULES:
        if field not in manifest:
            if required:
                raise _field_error(filename, field, "is required")
            continue
        if not accepts(manifest[field]):
            raise _field_error(filename, field, f"{expected}; got {manifest[field]!r:.80}")


def _instructions(manifest: Mapping[str, Any]) -> str:
    """The Markdown body an agent reads at Level 1: how to call this subprocess skill."""
    class_ = manifest.get("class", DEFAULT_CLASS)
    timeout = manifest.get("timeout_seconds", 0) or DEFAULT_TIMEOUT_SECONDS
    env = manifest.get("env_allow", [])
    env_text = ", ".join(f"`{name}`" for name in env) if env else "none (not even `PATH`)"
    schema = json.dumps(manifest.get("schema", _EMPTY_SCHEMA), indent=2, ensure_ascii=False)
    return (
        f"# {manifest['name']}\n\n"
        f"{manifest['description']}\n\n"
        f"This skill runs the script `{manifest['entry']}` as a subprocess. Send the arguments "
        "as one JSON object on stdin; the script prints one JSON object on stdout and writes "
        "log lines to stderr. A non-zero exit status means it failed.\n\n"
        f"- Class: `{class_}` ({_CLASS_MEANING[class_]})\n"
        f"- Category: `{manifest.get('category', DEFAULT_CATEGORY)}`\n"
        f"- Timeout: {timeout} seconds\n"
        f"- Environment passed to the script: {env_text}\n\n"
        "## Arguments (JSON Schema)\n\n"
        f"```json\n{schema}\n```\n"
    )


def skill_json_bundle_read(
    data: bytes, *, files: Mapping[str, bytes] | None = None, filename: str = "skill.json"
) -> SkillBundle:
    """Validate a skill.json and build its bundle; errors name ``filename`` and the field.

    ``files`` are the other files of the manifest's folder by relative path (from a ZIP or a
    directory): the entry becomes a ``script`` component, every other file a component typed
    by its folder. Without ``files`` (a lone skill.json upload) the entry cannot be found,
    which is an error naming it.
    """
    manifest = load_json_object(data, filename)
    _validate(manifest, filename)
    entry: str = manifest["entry"]
    if files is None or entry not in files:
        raise _field_error(
            filename,
            "entry",
            f"names {entry!r}, which is not in the skill folder; upload the folder (skill.json "
            "and its executable) as a ZIP",
        )
    components = tuple(
        component_build(path, content, type_="script" if path == entry else None)
        for path, content in sorted(files.items())
    )
    name: str = manifest["name"]
    bundle = SkillBundle(
        name=name,
        description=manifest["description"],
        instruction_body=_instructions(manifest),
        frontmatter={key: value for key, value in manifest.items() if key not in IDENTITY_KEYS},
        components=components,
        slug=name.replace("_", "-"),
        source="import-skill-json",
    )
    with located(filename):
        validate_bundle(bundle)
    return bundle
