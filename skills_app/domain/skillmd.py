"""SKILL.md: YAML frontmatter between ``---`` lines, then the Markdown instruction body.

Lossless both ways: ``parse_skill_md(serialize_skill_md(fm, body))`` gives back ``fm`` and
``body`` for any JSON-like frontmatter (string-keyed mappings, lists, strings, integers, finite
floats, booleans, null: what the database, the canonical hash and the API hold) and any body.
YAML is read without dates (``2024-01-01`` stays a string) and refuses duplicate keys; the body
is the bytes after the closing delimiter, never passed through YAML."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

from skills_app.domain.arguments import schema_refs_check
from skills_app.domain.text import printable, unstorable_reason
from skills_app.errors import ValidationFailed

IDENTITY_KEYS = ("name", "description")
# A SKILL.md written for agents says ``name: <slug>`` (the Agent Skills rule: the name equals
# the folder's); a display name that differs travels in the Agent Skills ``metadata`` map under
# DISPLAY_NAME_KEY, never as a top-level key (validators refuse unknown ones). Every reader takes
# it back as the name, and still reads LEGACY_DISPLAY_NAME_KEY, the top-level key older exports
# wrote (docs/contract.md §9). Neither is ever part of the stored frontmatter.
METADATA_KEY = "metadata"
DISPLAY_NAME_KEY = "xmemo-display-name"
LEGACY_DISPLAY_NAME_KEY = "x-xmemo-display-name"
RESERVED_KEYS = (*IDENTITY_KEYS, LEGACY_DISPLAY_NAME_KEY)
COMPATIBILITY_MAX = 500
SCRIPT_CLASSES = ("safe", "mutating", "dangerous")
# Renderer words an argument name may not shadow (docs/contract.md §11).
RESERVED_ARGUMENT_NAMES = ("ARGUMENTS", "ARG_COUNT")

_STR_TAG = "tag:yaml.org,2002:str"
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_MERGE_TAG = "tag:yaml.org,2002:merge"

_OPENING = re.compile(r"---[ \t]*(?:\r?\n|\Z)")
_CLOSING = re.compile(r"^---[ \t]*\r?(?:\n|\Z)", re.MULTILINE)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Line breaks YAML readers normalise inside block and single-quoted scalars; only the
# double-quoted style escapes them, so strings holding them must use it.
_NEEDS_DOUBLE_QUOTES = re.compile("[\r\x85\u2028\u2029]")
_NO_WRAP = 2**31 - 1
# Plain scalars a YAML 1.2 (core schema) reader takes for null, a boolean or a number. PyYAML,
# a YAML 1.1 writer, already quotes what YAML 1.1 reads so (dates, yes/on, 0x1F, 1_000); these
# are the ones it would leave plain (``1e3``, ``0o17``), which 1.2 readers turn into numbers.
_YAML12_NOT_TEXT = re.compile(
    r"~|null|Null|NULL|true|True|TRUE|false|False|FALSE"
    r"|[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"
    r"|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
)


class _FrontmatterLoader(yaml.SafeLoader):
    """SafeLoader without timestamps (dates stay strings), duplicate keys or aliases.

    Aliases are refused because a few lines of ``*ref`` can expand into billions of nodes
    ("billion laughs") once the frontmatter is walked or turned into JSON.
    """

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            raise ComposerError(
                None,
                None,
                "YAML aliases (*name) are not supported in frontmatter; write the value out",
                # The stubs leave peek_event unannotated; it returns a yaml.Event.
                self.peek_event().start_mark,  # type: ignore[no-untyped-call]
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: set[Any] = set()
        for key_node, _value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:  # unhashable key: the base class reports it properly
                continue
            if duplicate:
                raise ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"found duplicate key {key!r}",
                    key_node.start_mark,
                )
        return super().construct_mapping(node, deep=deep)


_FrontmatterLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _construct_timestamp_as_text(loader: _FrontmatterLoader, node: yaml.Node) -> str:
    """An explicit ``!!timestamp`` stays the text it was written as, like an implicit one."""
    return loader.construct_yaml_str(node)


_FrontmatterLoader.add_constructor(_TIMESTAMP_TAG, _construct_timestamp_as_text)


class _FrontmatterDumper(yaml.SafeDumper):
    """SafeDumper that never writes anchors/aliases and keeps strings round-trip safe."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style: str | None = None
    if _NEEDS_DOUBLE_QUOTES.search(data):
        style = '"'
    elif "\n" in data:
        style = "|"  # readable; the emitter falls back to quoting when a literal can't hold it
    elif _YAML12_NOT_TEXT.fullmatch(data):
        style = "'"  # text to YAML 1.1 and 1.2 readers alike (docs/contract.md §20)
    return dumper.represent_scalar(_STR_TAG, data, style=style)


_FrontmatterDumper.add_representer(str, _represent_str)


@dataclass(frozen=True)
class ParsedSkillMd:
    """A parsed SKILL.md: ``frontmatter`` still holds name/description as written."""

    frontmatter: dict[str, Any]
    body: str


def _json_problem(value: Any, field: str) -> tuple[str, str] | None:
    """The first (field, reason) that keeps ``value`` from being JSON-like, or None."""
    if value is None or isinstance(value, bool | int):
        return None
    if isinstance(value, str):
        reason = unstorable_reason(value)
        return (field, reason) if reason else None
    if isinstance(value, float):
        return None if math.isfinite(value) else (field, "must be a finite number")
    if isinstance(value, list):
        for index, item in enumerate(value):
            problem = _json_problem(item, f"{field}[{index}]")
            if problem:
                return problem
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                why = " (YAML reads an unquoted yes/no/on/off as true/false)"
                return field, (
                    f"has a key {key!r} that is not text; quote it"
                    + (why if isinstance(key, bool) else "")
                )
            name = f"{field}.{printable(key)}" if field else printable(key)
            reason = unstorable_reason(key)
            if reason:
                if field:
                    return field, f"has a key {printable(key)!r} that {reason}"
                return name, f"{reason} in its name"
            problem = _json_problem(item, name)
            if problem:
                return problem
        return None
    return field, f"holds a {type(value).__name__}, which JSON cannot store"


def _require_json_like(frontmatter: Mapping[str, Any], *, where: str) -> None:
    problem = _json_problem(dict(frontmatter), "")
    if problem:
        field, reason = problem
        subject = f"frontmatter key {field!r}" if field else "frontmatter"
        details: dict[str, Any] = {"field": field or "frontmatter"}
        if where:
            details["path"] = where
        prefix = f"{where}: " if where else ""
        raise ValidationFailed(f"{prefix}The {subject} {reason}.", details=details)


def parse_skill_md(source: str | bytes, *, path: str = "SKILL.md") -> ParsedSkillMd:
    """Split a SKILL.md into frontmatter and body; ``path`` names the file in errors."""
    if isinstance(source, bytes):
        try:
            text = source.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValidationFailed(
                f"{path} is not valid UTF-8 (bad byte at offset {exc.start}); save it as UTF-8.",
                details={"path": path, "offset": exc.start},
            ) from exc
    else:
        text = source
    text = text.removeprefix("\ufeff")

    opening = _OPENING.match(text)
    if opening is None:
        return ParsedSkillMd(frontmatter={}, body=text)
    closing = _CLOSING.search(text, opening.end())
    if closing is None:
        raise ValidationFailed(
            f"{path}: the frontmatter opened by '---' on line 1 is never closed by a '---' line.",
            details={"path": path, "line": 1},
        )
    yaml_text = text[opening.end() : closing.start()]
    try:
        loaded = yaml.load(yaml_text, Loader=_FrontmatterLoader)  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1  # +1 for 0-based, +1 for '---'
        problem = getattr(exc, "problem", None) or str(exc)
        raise ValidationFailed(
            f"{path}: the YAML frontmatter is malformed at line {line}: {problem}.",
            details={"path": path, "line": line},
        ) from exc
    except RecursionError as exc:
        raise ValidationFailed(
            f"{path}: the YAML frontmatter is nested too deeply.", details={"path": path}
        ) from exc
    except ValueError as exc:
        # Python refuses to convert integers of more than 4,300 digits (CVE-2020-10735).
        raise ValidationFailed(
            f"{path}: the YAML frontmatter holds a value that cannot be read: {exc}.",
            details={"path": path, "field": "frontmatter"},
        ) from exc
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        raise ValidationFailed(
            f"{path}: the frontmatter must be a YAML mapping of 'key: value' lines, "
            f"not a {type(loaded).__name__}.",
            details={"path": path, "line": 2},
        )
    _require_json_like(loaded, where=path)
    return ParsedSkillMd(frontmatter=loaded, body=text[closing.end() :])


def frontmatter_yaml(frontmatter: Mapping[str, Any], *, sort_keys: bool = False) -> str:
    """Deterministic YAML for JSON-like frontmatter ("" when empty); keys in insertion order
    unless ``sort_keys``."""
    _require_json_like(frontmatter, where="")
    if not frontmatter:
        return ""
    text: str = yaml.dump(
        dict(frontmatter),
        Dumper=_FrontmatterDumper,
        sort_keys=sort_keys,
        allow_unicode=True,
        default_flow_style=False,
        width=_NO_WRAP,
    )
    return text


def serialize_skill_md(frontmatter: Mapping[str, Any], body: str) -> str:
    """The SKILL.md text; always writes the delimiters so a body starting with '---' survives."""
    return f"---\n{frontmatter_yaml(frontmatter)}---\n{body}"


def split_frontmatter(frontmatter: Mapping[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """``(name, description, every other key)``; scalars are turned into text, absent is "".

    A display name (``metadata``'s DISPLAY_NAME_KEY, or the legacy top-level key) is the name
    (the ``name`` key then holds the slug, see ``skill_md_slug_hint``); it leaves ``metadata``,
    and a ``metadata`` left empty goes too."""
    rest = {key: value for key, value in frontmatter.items() if key not in RESERVED_KEYS}
    fields: dict[str, Any] = {"name": frontmatter.get("name")}
    metadata = rest.get(METADATA_KEY)
    if isinstance(metadata, dict) and DISPLAY_NAME_KEY in metadata:
        fields = {f"{METADATA_KEY}.{DISPLAY_NAME_KEY}": metadata[DISPLAY_NAME_KEY]}
        rest[METADATA_KEY] = {k: v for k, v in metadata.items() if k != DISPLAY_NAME_KEY}
        if not rest[METADATA_KEY]:
            del rest[METADATA_KEY]
    if LEGACY_DISPLAY_NAME_KEY in frontmatter:
        fields = {LEGACY_DISPLAY_NAME_KEY: frontmatter[LEGACY_DISPLAY_NAME_KEY]}
    fields["description"] = frontmatter.get("description")
    identity: list[str] = []
    for key, value in fields.items():
        if isinstance(value, dict | list):
            raise ValidationFailed(
                f"The frontmatter key {key!r} must be text, not a {type(value).__name__}.",
                details={"field": key},
            )
        identity.append("" if value is None else str(value))
    return identity[0], identity[1], rest


def skill_md_slug_hint(frontmatter: Mapping[str, Any]) -> str:
    """The text a SKILL.md's slug is suggested from: its ``name`` key as written."""
    value = frontmatter.get("name")
    return "" if value is None or isinstance(value, dict | list) else str(value)


def merge_frontmatter(
    name: str, description: str, rest: Mapping[str, Any], *, slug: str | None = None
) -> dict[str, Any]:
    """The full frontmatter of a SKILL.md: name and description first, then ``rest`` in order.

    With ``slug``, ``name`` is the slug and a display name that differs goes last into the
    author's ``metadata`` (a ``metadata`` of its own follows the description when there is
    none). A stray reserved key inside ``rest`` never overrides the arguments.
    """
    merged: dict[str, Any] = {"name": slug or name, "description": description}
    extra = {key: value for key, value in rest.items() if key not in RESERVED_KEYS}
    if slug and slug != name:
        metadata = extra.get(METADATA_KEY)
        if isinstance(metadata, dict):
            extra[METADATA_KEY] = {**metadata, DISPLAY_NAME_KEY: name}
        else:
            merged[METADATA_KEY] = {DISPLAY_NAME_KEY: name}
    merged.update(extra)
    return merged


# --- dialect validation (docs/contract.md §8) -----------------------------------------------------


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_argument_names(value: Any) -> bool:
    return (
        _is_str_list(value)
        and all(_IDENTIFIER.fullmatch(name) for name in value)
        and len(set(value)) == len(value)
        and not set(value) & set(RESERVED_ARGUMENT_NAMES)
    )


# (dotted key, accepts, what it must be). A nested key is checked only when its parent is a
# mapping; the parent's own row comes first and reports anything else.
_FIELD_RULES: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    # Agent Skills
    ("license", _is_str, "a string"),
    (
        "compatibility",
        lambda v: _is_str(v) and len(v) <= COMPATIBILITY_MAX,
        f"a string of at most {COMPATIBILITY_MAX} characters",
    ),
    ("allowed-tools", lambda v: _is_str(v) or _is_str_list(v), "a string or a list of strings"),
    ("metadata", lambda v: isinstance(v, dict), "a mapping"),
    # rich native form
    ("metadata.os", lambda v: _is_str(v) or _is_str_list(v), "a string or a list of strings"),
    ("metadata.requires", lambda v: isinstance(v, dict | list), "a mapping or a list"),
    ("when_to_use", _is_str, "a string"),
    ("activation", lambda v: isinstance(v, dict | str), "a mapping or a string"),
    (
        "tools",
        lambda v: isinstance(v, list) and all(isinstance(t, dict | str) for t in v),
        "a list of tool names or tool mappings",
    ),
    # command form
    ("invoke", lambda v: isinstance(v, dict), "a mapping with optional 'user' and 'model'"),
    ("invoke.user", lambda v: isinstance(v, bool), "true or false"),
    ("invoke.model", lambda v: isinstance(v, bool), "true or false"),
    ("max-iterations", lambda v: _is_int(v) and v > 0, "a positive integer"),
    (
        "argument-names",
        _is_argument_names,
        "a list of distinct identifiers (letters, digits and '_', not starting with a digit) "
        "other than ARGUMENTS and ARG_COUNT",
    ),
    # skill.json manifest fields
    ("entry", _is_str, "a string"),
    ("env_allow", _is_str_list, "a list of strings"),
    ("timeout_seconds", lambda v: _is_int(v) and v >= 0, "a non-negative integer"),
    ("class", lambda v: v in SCRIPT_CLASSES, "one of " + ", ".join(SCRIPT_CLASSES)),
    ("category", _is_str, "a string"),
    ("schema", lambda v: isinstance(v, dict), "a mapping (a JSON Schema object)"),
)


def validate_frontmatter(frontmatter: Mapping[str, Any]) -> None:
    """Refuse non-JSON frontmatter and known keys of the wrong type; unknown keys pass as is."""
    if not isinstance(frontmatter, dict):
        raise ValidationFailed(
            "The frontmatter must be a mapping of keys to values.", details={"field": "frontmatter"}
        )
    _require_json_like(frontmatter, where="")
    for dotted, accepts, expected in _FIELD_RULES:
        parent_key, _, child_key = dotted.rpartition(".")
        parent = frontmatter.get(parent_key) if parent_key else frontmatter
        if not isinstance(parent, dict) or child_key not in parent:
            continue
        value = parent[child_key]
        if not accepts(value):
            raise ValidationFailed(
                f"The frontmatter key {dotted!r} must be {expected}; got {value!r:.80}.",
                details={"field": dotted},
            )
    if "schema" in frontmatter:
        schema_refs_check(
            frontmatter["schema"], field="frontmatter.schema", against="the script's schema"
        )
