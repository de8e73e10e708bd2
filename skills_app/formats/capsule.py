"""Source Capsules (docs/contract.md §9): lossless, deterministic ZIP exports of revisions, and
their reading.

A capsule is ``capsule.json``, ``SKILL.md`` and the components, in a fixed order with fixed
timestamps and modes, so a revision always gives the same bytes; packs and one skill's history
put capsules in folders of one ZIP. ``capsule_bundle_read`` reads one back exactly from its
manifest and verifies every sha256, size and the canonical hash, so a tampered capsule is
refused. The format: docs/backup.md, *Source Capsules*."""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from skills_app.domain.bundle import ComponentData, SkillBundle
from skills_app.domain.canonical import canonical_hash, sha256_hex
from skills_app.domain.limits import validate_bundle
from skills_app.domain.paths import check_unique_paths, validate_logical_path
from skills_app.domain.skillmd import merge_frontmatter, serialize_skill_md
from skills_app.errors import UnsupportedFormat, ValidationFailed
from skills_app.formats.files import (
    CAPSULE_JSON,
    SKILL_MD,
    FileRole,
    RawRead,
    check_component_count,
    load_json_object,
    located,
    read_checked,
)
from skills_app.formats.skillmd import skill_md_bundle_read

CAPSULE_FORMAT = "xmemo-source-capsule"
CAPSULE_FORMAT_VERSION = 1

_ZIP_DATE_TIME = (1980, 1, 1, 0, 0, 0)
_UNIX = 3
_FILE_MODE = 0o100644
_SCRIPT_MODE = 0o100755
_DEFLATE_LEVEL = 6  # zlib default: level 9 took ~2x the time for 0-1.3 % smaller capsules
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class CapsuleComponent:
    logical_path: str
    type: str
    media_type: str
    sha256: str
    size: int
    content: bytes


@dataclass(frozen=True)
class CapsuleRevision:
    """Everything a capsule records about one revision (filled from the database by the caller)."""

    skill_id: str
    slug: str
    workspace: str
    revision_id: str
    revision_number: int
    state: str
    name: str
    description: str
    frontmatter: Mapping[str, Any]
    instruction_body: str
    canonical_hash: str
    components: Sequence[CapsuleComponent] = field(default_factory=tuple)


def capsule_component(component: ComponentData, *, sha256: str | None = None) -> CapsuleComponent:
    """The archive row of one component, as Source Capsules and backups record it: its bytes,
    their size and sha256. ``sha256`` is the hash the database recorded, where the caller read
    one: the writers check it against the bytes, so content that no longer matches is refused
    instead of exported under a stale hash."""
    return CapsuleComponent(
        logical_path=component.logical_path,
        type=component.type,
        media_type=component.media_type,
        sha256=sha256_hex(component.content) if sha256 is None else sha256,
        size=len(component.content),
        content=component.content,
    )


def capsule_revision(
    bundle: SkillBundle,
    *,
    skill_id: str,
    slug: str,
    workspace: str,
    revision_id: str,
    revision_number: int,
    state: str,
    canonical_hash: str,
) -> CapsuleRevision:
    """The capsule row of a stored revision: its content (``bundle``) and the ids around it."""
    return CapsuleRevision(
        skill_id=skill_id,
        slug=slug,
        workspace=workspace,
        revision_id=revision_id,
        revision_number=revision_number,
        state=state,
        name=bundle.name,
        description=bundle.description,
        frontmatter=bundle.frontmatter,
        instruction_body=bundle.instruction_body,
        canonical_hash=canonical_hash,
        components=tuple(capsule_component(c) for c in bundle.components or ()),
    )


# --- writing ----------------------------------------------------------------------------------


def _integrity_error(rev: CapsuleRevision, problem: str) -> ValidationFailed:
    return ValidationFailed(
        f"Revision {rev.revision_id} of {rev.slug!r} cannot be exported: {problem}.",
        details={"revision_id": rev.revision_id},
    )


def _verify(rev: CapsuleRevision) -> None:
    """Refuse to write a capsule that its own reader would refuse (stored hashes are stale)."""
    for component in rev.components:
        if len(component.content) != component.size:
            raise _integrity_error(rev, f"{component.logical_path!r} is not {component.size} bytes")
        if sha256_hex(component.content) != component.sha256:
            raise _integrity_error(rev, f"{component.logical_path!r} does not match its sha256")
    computed = canonical_hash(
        name=rev.name,
        description=rev.description,
        frontmatter=rev.frontmatter,
        instruction_body=rev.instruction_body,
        components=[(c.logical_path, c.type, c.sha256) for c in rev.components],
    )
    if computed != rev.canonical_hash:
        raise _integrity_error(rev, f"its content hashes to {computed}, not {rev.canonical_hash}")


def capsule_manifest(rev: CapsuleRevision) -> dict[str, Any]:
    """The capsule.json document (keys in a fixed order; frontmatter in its own order)."""
    components = sorted(rev.components, key=lambda c: c.logical_path)
    return {
        "format": CAPSULE_FORMAT,
        "format_version": CAPSULE_FORMAT_VERSION,
        "skill_id": rev.skill_id,
        "slug": rev.slug,
        "workspace": rev.workspace,
        "revision_id": rev.revision_id,
        "revision_number": rev.revision_number,
        "state": rev.state,
        "name": rev.name,
        "description": rev.description,
        "frontmatter": dict(rev.frontmatter),
        "canonical_hash": rev.canonical_hash,
        "components": [
            {
                "path": c.logical_path,
                "type": c.type,
                "size": c.size,
                "media_type": c.media_type,
                "sha256": c.sha256,
            }
            for c in components
        ],
    }


def capsule_skill_md(
    *,
    slug: str,
    name: str,
    description: str,
    frontmatter: Mapping[str, Any],
    instruction_body: str,
) -> bytes:
    """A capsule's SKILL.md bytes (what sync writes too, docs/contract.md §17)."""
    text = serialize_skill_md(
        merge_frontmatter(name, description, frontmatter, slug=slug), instruction_body
    )
    return text.encode("utf-8")


def _capsule_entries(rev: CapsuleRevision) -> list[tuple[str, bytes, int]]:
    """``(path, bytes, unix mode)`` of one capsule, in archive order."""
    _verify(rev)
    manifest = json.dumps(capsule_manifest(rev), indent=2, ensure_ascii=False) + "\n"
    skill_md = capsule_skill_md(
        slug=rev.slug,
        name=rev.name,
        description=rev.description,
        frontmatter=rev.frontmatter,
        instruction_body=rev.instruction_body,
    )
    entries = [
        (CAPSULE_JSON, manifest.encode("utf-8"), _FILE_MODE),
        (SKILL_MD, skill_md, _FILE_MODE),
    ]
    for c in sorted(rev.components, key=lambda c: c.logical_path):
        entries.append(
            (c.logical_path, c.content, _SCRIPT_MODE if c.type == "script" else _FILE_MODE)
        )
    return entries


def deterministic_zip(entries: Iterable[tuple[str, bytes, int]]) -> bytes:
    """A ZIP of ``(path, bytes, unix mode)`` entries in the given order: same input, same bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, data, mode in entries:
            info = zipfile.ZipInfo(path, date_time=_ZIP_DATE_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = _UNIX
            info.external_attr = mode << 16
            archive.writestr(info, data, compresslevel=_DEFLATE_LEVEL)
    return buffer.getvalue()


def capsule_write(rev: CapsuleRevision) -> bytes:
    """One revision's capsule; identical bytes for the same revision, every time."""
    return deterministic_zip(_capsule_entries(rev))


def capsule_pack_write(revisions_by_folder: Sequence[tuple[str, CapsuleRevision]]) -> bytes:
    """Several capsules in one ZIP, each under its folder, in the order given.

    Folders are relative paths (``slug`` or ``slug/r0001``), unique, and none inside another.
    """
    folders = [validate_logical_path(folder) for folder, _ in revisions_by_folder]
    check_unique_paths(folders)
    return deterministic_zip(
        (f"{folder}/{path}", data, mode)
        for folder, rev in revisions_by_folder
        for path, data, mode in _capsule_entries(rev)
    )


def _history_folder(rev: CapsuleRevision) -> str:
    return f"{rev.slug}/r{rev.revision_number:04d}"


def capsule_history_write(revisions: Sequence[CapsuleRevision]) -> bytes:
    """One skill's export with all its revisions: ``<slug>/r0001/…`` in revision order."""
    if len({rev.skill_id for rev in revisions}) > 1:
        raise ValueError("a history export holds the revisions of one skill")
    ordered = sorted(revisions, key=lambda rev: rev.revision_number)
    return capsule_pack_write([(_history_folder(rev), rev) for rev in ordered])


# --- reading ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _ListedComponent:
    path: str
    type: str
    media_type: str
    sha256: str
    size: int


def _require(obj: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    value = obj.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValidationFailed(
            f"{where}: {key!r} is missing or not a {kind.__name__}.",
            details={"path": where, "field": key},
        )
    return value


def _listed_components(manifest: Mapping[str, Any], where: str) -> list[_ListedComponent]:
    listed = []
    for index, item in enumerate(_require(manifest, "components", list, where)):
        if not isinstance(item, dict):
            raise ValidationFailed(
                f"{where}: components[{index}] is not an object.", details={"path": where}
            )
        entry = _ListedComponent(
            path=_require(item, "path", str, where),
            type=_require(item, "type", str, where),
            media_type=_require(item, "media_type", str, where),
            sha256=_require(item, "sha256", str, where),
            size=_require(item, "size", int, where),
        )
        if not _SHA256.fullmatch(entry.sha256):
            raise ValidationFailed(
                f"{where}: the sha256 of {entry.path!r} is not 64 lowercase hex digits.",
                details={"path": where, "component": entry.path},
            )
        listed.append(entry)
    return listed


def _manifest_load(data: bytes, where: str) -> dict[str, Any]:
    manifest = load_json_object(data, where)
    if manifest.get("format") != CAPSULE_FORMAT:
        raise ValidationFailed(
            f"{where} is not a Source Capsule manifest (its format is not {CAPSULE_FORMAT!r}); "
            f"the name {CAPSULE_JSON} is reserved for capsules.",
            details={"path": where},
        )
    if manifest.get("format_version") != CAPSULE_FORMAT_VERSION:
        raise UnsupportedFormat(
            f"{where} has format_version {manifest.get('format_version')!r}; this server reads "
            f"version {CAPSULE_FORMAT_VERSION}.",
            details={"path": where},
        )
    return manifest


def capsule_bundle_read(
    names: Collection[str], read: RawRead, *, where: str, source: str, source_ref: str
) -> SkillBundle:
    """The bundle of a capsule folder whose files are ``names`` (relative), opened by ``read``.

    ``where`` prefixes every path in errors (e.g. ``"pack/incident-response/"``). Name,
    description and frontmatter come from the manifest (JSON, exact) and must agree with
    SKILL.md; the body comes from SKILL.md; components carry the manifest's type and media
    type. Any disagreement with a recorded size, sha256 or the canonical hash is refused.
    """
    manifest_path = f"{where}{CAPSULE_JSON}"
    manifest = _manifest_load(
        read_checked(read, CAPSULE_JSON, where=where, role=FileRole.MANIFEST), manifest_path
    )
    listed = _listed_components(manifest, manifest_path)
    listed_paths = {entry.path for entry in listed}
    unlisted = sorted(set(names) - listed_paths - {CAPSULE_JSON, SKILL_MD})
    if unlisted:
        raise ValidationFailed(
            f"{where}{unlisted[0]} is not listed in {manifest_path}; a capsule holds exactly "
            "the components its manifest lists.",
            details={"path": f"{where}{unlisted[0]}"},
        )
    missing = sorted(listed_paths - set(names))
    if missing:
        raise ValidationFailed(
            f"{manifest_path} lists {missing[0]!r}, but {where}{missing[0]} is missing.",
            details={"path": f"{where}{missing[0]}"},
        )
    check_component_count(len(listed), where=where)

    if SKILL_MD not in names:
        raise ValidationFailed(f"{where}{SKILL_MD} is missing.", details={"path": where + SKILL_MD})
    skill_md_path = f"{where}{SKILL_MD}"
    from_skill_md = skill_md_bundle_read(
        read_checked(read, SKILL_MD, where=where, role=FileRole.SKILL_MD), filename=skill_md_path
    )
    name = _require(manifest, "name", str, manifest_path)
    description = _require(manifest, "description", str, manifest_path)
    frontmatter = _require(manifest, "frontmatter", dict, manifest_path)
    if (from_skill_md.name, from_skill_md.description, from_skill_md.frontmatter) != (
        name,
        description,
        frontmatter,
    ):
        raise ValidationFailed(
            f"The frontmatter of {skill_md_path} differs from {manifest_path}: edit both, or "
            f"remove {CAPSULE_JSON} to import the folder as a plain skill.",
            details={"path": skill_md_path},
        )

    components = []
    hashed = []
    for entry in sorted(listed, key=lambda e: e.path):
        content = read_checked(read, entry.path, where=where, role=FileRole.COMPONENT)
        if len(content) != entry.size or sha256_hex(content) != entry.sha256:
            raise ValidationFailed(
                f"{where}{entry.path} does not match the size and sha256 recorded in "
                f"{manifest_path}.",
                details={"path": f"{where}{entry.path}"},
            )
        components.append(ComponentData(entry.path, entry.type, content, entry.media_type))
        hashed.append((entry.path, entry.type, entry.sha256))

    recorded = _require(manifest, "canonical_hash", str, manifest_path)
    computed = canonical_hash(
        name=name,
        description=description,
        frontmatter=frontmatter,
        instruction_body=from_skill_md.instruction_body,
        components=hashed,
    )
    if computed != recorded:
        raise ValidationFailed(
            f"{manifest_path}: the capsule's content hashes to {computed}, not the recorded "
            f"canonical_hash {recorded}; it was changed after export.",
            details={"path": manifest_path, "recorded": recorded, "computed": computed},
        )
    bundle = SkillBundle(
        name=name,
        description=description,
        instruction_body=from_skill_md.instruction_body,
        frontmatter=frontmatter,
        components=tuple(components),
        slug=_require(manifest, "slug", str, manifest_path),
        source=source,
        source_ref=source_ref,
    )
    with located(where):
        validate_bundle(bundle)
    return bundle
