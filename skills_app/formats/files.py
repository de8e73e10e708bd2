"""What every import reader agrees on about the files of one skill folder.

A skill folder (inside a ZIP, a repository archive or a directory tree) holds one manifest —
``SKILL.md``, or ``skill.json`` when there is no SKILL.md — optionally a Source Capsule
``capsule.json``, and component files. The archive and directory readers differ only in how
they list and open files, so they hand the folder over as a list of names plus a ``RawRead``
callable, and the rules below (size caps by role, component type by folder, junk to ignore)
live here once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import Enum
from typing import Any

from skills_app.domain.bundle import ComponentData
from skills_app.domain.limits import MAX_BODY_BYTES, MAX_COMPONENT_BYTES, MAX_COMPONENTS
from skills_app.domain.paths import guess_media_type, is_text
from skills_app.errors import (
    BodyTooLarge,
    ComponentTooLarge,
    TooManyComponents,
    ValidationFailed,
    XmemoError,
)

SKILL_MD = "SKILL.md"
SKILL_JSON = "skill.json"
CAPSULE_JSON = "capsule.json"
BACKUP_JSON = "backup.json"  # the manifest of a workspace backup (skills_app.formats.backup)

# SKILL.md holds the frontmatter (≤ 64 KiB as JSON, checked later) and the body (≤ 64 KiB);
# YAML is wordier than compact JSON, hence the slack. Manifests get the same allowance.
MANIFEST_MAX_BYTES = 256 * 1024

# Left behind by archivers and file managers, never meant as skill content: ignored wherever
# they appear (a folder name anywhere in the path, or a file name).
JUNK_FOLDERS = frozenset({"__MACOSX", ".git"})
JUNK_FILES = frozenset({".DS_Store", "Thumbs.db"})

# docs/contract.md §8: the first folder of a component's path decides its type.
_TYPE_BY_FOLDER = {
    "scripts": "script",
    "reference": "reference",
    "references": "reference",
    "examples": "example",
    "templates": "template",
    "assets": "artifact",
}

RawRead = Callable[[str, int], bytes]
"""``read(name, n)``: at most ``n`` bytes of the folder's file ``name`` (a relative path)."""


class FileRole(Enum):
    """What a file is to its skill folder; decides its size cap and the error past it."""

    SKILL_MD = "skill_md"
    MANIFEST = "manifest"
    COMPONENT = "component"

    @property
    def max_bytes(self) -> int:
        return MAX_COMPONENT_BYTES if self is FileRole.COMPONENT else MANIFEST_MAX_BYTES


def is_junk(path: str) -> bool:
    parts = path.split("/")
    return parts[-1] in JUNK_FILES or any(part in JUNK_FOLDERS for part in parts[:-1])


def read_checked(read: RawRead, name: str, *, where: str, role: FileRole) -> bytes:
    """Read ``name`` through ``read`` but never more than its cap + 1 bytes.

    Past the cap the error names ``where + name``: BodyTooLarge for SKILL.md,
    ComponentTooLarge for a component, ValidationFailed for a manifest.
    """
    limit = role.max_bytes
    data = read(name, limit + 1)
    if len(data) <= limit:
        return data
    path = f"{where}{name}"
    details = {"path": path, "limit": limit}
    if role is FileRole.SKILL_MD:
        raise BodyTooLarge(
            f"{path} is larger than {limit:,} bytes; the instruction body may hold at most "
            f"{MAX_BODY_BYTES:,} bytes.",
            details=details,
        )
    if role is FileRole.COMPONENT:
        raise ComponentTooLarge(
            f"{path} is larger than {limit:,} bytes, the limit for one component.", details=details
        )
    raise ValidationFailed(f"{path} is larger than {limit:,} bytes.", details=details)


def check_component_count(count: int, *, where: str) -> None:
    """Refuse an over-full folder before any of its files is read."""
    if count > MAX_COMPONENTS:
        raise TooManyComponents(
            f"{where or 'The skill folder'} holds {count} component files; "
            f"the limit is {MAX_COMPONENTS}.",
            details={"path": where, "limit": MAX_COMPONENTS, "count": count},
        )


def component_type(path: str, content: bytes) -> str:
    folder = path.split("/", 1)[0] if "/" in path else ""
    if folder in _TYPE_BY_FOLDER:
        return _TYPE_BY_FOLDER[folder]
    return "document" if is_text(content) else "artifact"


def component_build(path: str, content: bytes, *, type_: str | None = None) -> ComponentData:
    """A component typed by its folder (or ``type_``), with the media type guessed."""
    return ComponentData(
        logical_path=path,
        type=type_ or component_type(path, content),
        content=content,
        media_type=guess_media_type(path, content),
    )


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"the key {key!r} appears twice")
        result[key] = value
    return result


def _refuse_constant(token: str) -> Any:
    raise ValueError(f"{token} is not a JSON number")


def load_json_object(data: bytes, filename: str) -> dict[str, Any]:
    """Strict JSON for manifests: UTF-8, an object, no duplicate keys, no NaN/Infinity."""
    try:
        loaded = json.loads(
            data.decode("utf-8"),
            object_pairs_hook=_refuse_duplicates,
            parse_constant=_refuse_constant,
        )
    except UnicodeDecodeError as exc:
        raise ValidationFailed(
            f"{filename} is not valid UTF-8 (bad byte at offset {exc.start}).",
            details={"path": filename},
        ) from exc
    except ValueError as exc:  # JSONDecodeError is a ValueError, and so are the hooks' errors
        raise ValidationFailed(
            f"{filename} is not valid JSON: {exc}.", details={"path": filename}
        ) from exc
    except RecursionError as exc:
        raise ValidationFailed(
            f"{filename} is nested too deeply.", details={"path": filename}
        ) from exc
    if not isinstance(loaded, dict):
        raise ValidationFailed(
            f"{filename} must hold a JSON object, not a {type(loaded).__name__}.",
            details={"path": filename},
        )
    return loaded


@contextmanager
def located(where: str) -> Iterator[None]:
    """Prefix any XmemoError raised inside with ``where`` (a file or folder), keeping its code.

    Domain validation does not know which archive entry or folder it is looking at; a pack
    import must say which of its skills failed.
    """
    label = where.rstrip("/")
    try:
        yield
    except XmemoError as exc:
        if not label or exc.message.startswith(label):
            raise
        details = {**exc.details, "location": label}
        raise type(exc)(f"{label}: {exc.message}", details=details) from exc
