"""Workspace backups (docs/contract.md §9): every skill with every revision, written and read back
verified.

A deterministic ZIP: ``backup.json`` (the manifest), each revision's ``SKILL.md`` under
``skills/<slug>/r0001/``, and each distinct component's bytes once under ``blobs/<sha256>``; no
public id, the workspace's identity in one place. Readers refuse an unknown ``format_version``
and still read older ones. Reading verifies everything before anything is stored: the safe ZIP
reader, exactly the listed files, every blob's size and hash, every SKILL.md and canonical
hash, the limits, revision numbers 1..n. The format in full: docs/backup.md."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, BinaryIO

from skills_app.domain.bundle import ComponentData, SkillBundle
from skills_app.domain.canonical import canonical_hash, sha256_hex
from skills_app.domain.labels import is_rejected, validate_label_name
from skills_app.domain.limits import validate_bundle, validate_slug
from skills_app.domain.permission_modes import PERMISSION_MODES
from skills_app.domain.shapes.fields import REVISION_SOURCES, SKILL_STATUSES
from skills_app.domain.skillmd import merge_frontmatter, serialize_skill_md
from skills_app.errors import UnsafeArchive, UnsupportedFormat, ValidationFailed, XmemoError
from skills_app.formats.archive import ArchiveLimits, zip_files_open
from skills_app.formats.capsule import CapsuleComponent, deterministic_zip
from skills_app.formats.files import (
    BACKUP_JSON,
    SKILL_MD,
    FileRole,
    RawRead,
    load_json_object,
    located,
    read_checked,
)

BACKUP_FORMAT = "xmemo-workspace-backup"
BACKUP_FORMAT_VERSION = 5
READABLE_FORMAT_VERSIONS = (1, 2, 3, 4, 5)
OVERRIDE_REASON_MAX = 2000
OUTCOMES = ("success", "partial", "failure")

STATES = ("draft", "proposed", "published", "deprecated")
STATUSES = SKILL_STATUSES
SOURCES = REVISION_SOURCES
# A whole workspace: far more entries and bytes than one skill's archive may hold.
BACKUP_LIMITS = ArchiveLimits(max_entries=200_000, max_total_bytes=1024 * 1024 * 1024)
MANIFEST_MAX_BYTES = 64 * 1024 * 1024
_MODE = 0o100644


@dataclass(frozen=True)
class BackupComment:
    author: str | None
    body: str
    line: int | None
    action: str
    created_at: datetime


@dataclass(frozen=True)
class BackupApproval:
    user: str | None
    created_at: datetime


@dataclass(frozen=True)
class BackupOutcome:
    """A reported outcome (docs/contract.md §22): who reported it is kept as text."""

    date: str
    reporter: str
    client_name: str
    outcome: str
    note: str
    reported_at: datetime


@dataclass(frozen=True)
class BackupScanOverride:
    """An owner's override of a blocking scan (docs/contract.md §21): who, as text, and why."""

    by: str
    reason: str
    at: datetime


@dataclass(frozen=True)
class BackupRevision:
    revision_number: int
    state: str
    name: str
    description: str
    frontmatter: Mapping[str, Any]
    instruction_body: str
    canonical_hash: str
    components: tuple[CapsuleComponent, ...]
    parent_revision_number: int | None
    author: str | None
    message: str
    source: str
    source_ref: str
    created_at: datetime
    state_changed_at: datetime | None
    reviewed_by: str | None
    reviewed_at: datetime | None
    review_comment: str
    comments: tuple[BackupComment, ...] = ()
    approvals: tuple[BackupApproval, ...] = ()
    answers_revision_number: int | None = None
    outcomes: tuple[BackupOutcome, ...] = ()
    scan_override: BackupScanOverride | None = None

    def bundle(self) -> SkillBundle:
        return SkillBundle(
            name=self.name,
            description=self.description,
            instruction_body=self.instruction_body,
            frontmatter=dict(self.frontmatter),
            components=tuple(
                ComponentData(c.logical_path, c.type, c.content, c.media_type)
                for c in self.components
            ),
            source=self.source,
            source_ref=self.source_ref,
        )


@dataclass(frozen=True)
class BackupLabel:
    name: str
    revision_number: int
    moved_by: str | None
    moved_at: datetime


@dataclass(frozen=True)
class BackupSkill:
    slug: str
    status: str
    created_at: datetime
    revisions: tuple[BackupRevision, ...]
    labels: tuple[BackupLabel, ...] = ()
    # What the reader left out, each a sentence for the restore's result (a label on a rejected
    # revision, which backups written before rejecting removed labels could hold).
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Backup:
    workspace_slug: str
    workspace_name: str
    skills: tuple[BackupSkill, ...]
    # A team's permission mode (version 5; None: a personal workspace's, or an older backup).
    permission_mode: str | None = None

    @property
    def revision_count(self) -> int:
        return sum(len(skill.revisions) for skill in self.skills)

    @property
    def notes(self) -> list[str]:
        return [note for skill in self.skills for note in skill.notes]


# --- writing ----------------------------------------------------------------------------------


def _timestamp(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat(timespec="microseconds")


def _skill_md_path(slug: str, number: int) -> str:
    return f"skills/{slug}/r{number:04d}/{SKILL_MD}"


def _blob_path(sha256: str) -> str:
    return f"blobs/{sha256}"


def _revision_manifest(rev: BackupRevision) -> dict[str, Any]:
    return {
        "revision_number": rev.revision_number,
        "state": rev.state,
        "name": rev.name,
        "description": rev.description,
        "frontmatter": dict(rev.frontmatter),
        "canonical_hash": rev.canonical_hash,
        "parent_revision_number": rev.parent_revision_number,
        "author": rev.author,
        "message": rev.message,
        "source": rev.source,
        "source_ref": rev.source_ref,
        "created_at": _timestamp(rev.created_at),
        "state_changed_at": _timestamp(rev.state_changed_at),
        "review": {
            "reviewed_by": rev.reviewed_by,
            "reviewed_at": _timestamp(rev.reviewed_at),
            "comment": rev.review_comment,
            "comments": [
                {
                    "author": c.author,
                    "body": c.body,
                    "line": c.line,
                    "action": c.action,
                    "created_at": _timestamp(c.created_at),
                }
                for c in rev.comments
            ],
            "approvals": [
                {"user": a.user, "created_at": _timestamp(a.created_at)} for a in rev.approvals
            ],
            "answers_revision_number": rev.answers_revision_number,
        },
        "outcomes": [
            {
                "date": o.date,
                "reporter": o.reporter,
                "client_name": o.client_name,
                "outcome": o.outcome,
                "note": o.note,
                "reported_at": _timestamp(o.reported_at),
            }
            for o in rev.outcomes
        ],
        "scan_override": None
        if rev.scan_override is None
        else {
            "by": rev.scan_override.by,
            "reason": rev.scan_override.reason,
            "at": _timestamp(rev.scan_override.at),
        },
        "components": [
            {
                "path": c.logical_path,
                "type": c.type,
                "size": c.size,
                "media_type": c.media_type,
                "sha256": c.sha256,
            }
            for c in sorted(rev.components, key=lambda c: c.logical_path)
        ],
    }


def backup_manifest(backup: Backup) -> dict[str, Any]:
    """The backup.json document: fixed key order, skills by slug, revisions by number."""
    return {
        "format": BACKUP_FORMAT,
        "format_version": BACKUP_FORMAT_VERSION,
        "workspace": {
            "slug": backup.workspace_slug,
            "name": backup.workspace_name,
            "permission_mode": backup.permission_mode,
        },
        "skills": [
            {
                "slug": skill.slug,
                "status": skill.status,
                "created_at": _timestamp(skill.created_at),
                "revisions": [
                    _revision_manifest(rev)
                    for rev in sorted(skill.revisions, key=lambda r: r.revision_number)
                ],
                "labels": [
                    {
                        "name": label.name,
                        "revision_number": label.revision_number,
                        "moved_by": label.moved_by,
                        "moved_at": _timestamp(label.moved_at),
                    }
                    for label in sorted(skill.labels, key=lambda label: label.name)
                ],
            }
            for skill in sorted(backup.skills, key=lambda s: s.slug)
        ],
    }


def _entries(backup: Backup) -> Iterator[tuple[str, bytes, int]]:
    manifest = json.dumps(backup_manifest(backup), indent=1, ensure_ascii=False) + "\n"
    yield BACKUP_JSON, manifest.encode("utf-8"), _MODE
    blobs: dict[str, bytes] = {}
    for skill in sorted(backup.skills, key=lambda s: s.slug):
        for rev in sorted(skill.revisions, key=lambda r: r.revision_number):
            text = serialize_skill_md(
                merge_frontmatter(rev.name, rev.description, rev.frontmatter),
                rev.instruction_body,
            )
            yield _skill_md_path(skill.slug, rev.revision_number), text.encode("utf-8"), _MODE
            for component in rev.components:
                if sha256_hex(component.content) != component.sha256:
                    raise ValidationFailed(
                        f"{component.logical_path!r} of {skill.slug} r{rev.revision_number} "
                        "does not match its stored sha256; the backup was not written.",
                        details={"slug": skill.slug, "path": component.logical_path},
                    )
                blobs[component.sha256] = component.content
    for sha in sorted(blobs):
        yield _blob_path(sha), blobs[sha], _MODE


def backup_write(backup: Backup) -> bytes:
    """The backup ZIP; the same workspace content always gives the same bytes."""
    return deterministic_zip(_entries(backup))


# --- reading ----------------------------------------------------------------------------------


def _refuse(where: str, problem: str, **details: Any) -> ValidationFailed:
    return ValidationFailed(f"{where}: {problem}", details={"path": where, **details})


def _get(obj: Mapping[str, Any], key: str, kinds: tuple[type, ...], where: str) -> Any:
    value = obj.get(key)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
        raise _refuse(where, f"{key!r} is missing or not {names}.", field=key)
    return value


def _parse_time(obj: Mapping[str, Any], key: str, where: str, *, optional: bool = False) -> Any:
    kinds: tuple[type, ...] = (str, type(None)) if optional else (str,)
    text = _get(obj, key, kinds, where)
    if text is None:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError as exc:
        raise _refuse(where, f"{key!r} is not an ISO 8601 time.", field=key) from exc
    if value.tzinfo is None:
        raise _refuse(where, f"{key!r} has no time zone.", field=key)
    return value


def _choice(obj: Mapping[str, Any], key: str, allowed: tuple[str, ...], where: str) -> str:
    value = _get(obj, key, (str,), where)
    if value not in allowed:
        raise _refuse(where, f"{key!r} must be one of {', '.join(allowed)}.", field=key)
    return str(value)


class _Reader:
    """Reads one backup's files once each, remembering which were read."""

    def __init__(self, names: list[str], read: RawRead) -> None:
        self.names = set(names)
        self.read = read
        self.used: set[str] = {BACKUP_JSON}
        self.blobs: dict[str, bytes] = {}

    def file(self, name: str, role: FileRole, where: str) -> bytes:
        if name not in self.names:
            raise _refuse(where, f"{name} is missing from the backup.", file=name)
        self.used.add(name)
        return read_checked(self.read, name, where="", role=role)

    def blob(self, sha: str, size: int, where: str) -> bytes:
        if sha not in self.blobs:
            content = self.file(_blob_path(sha), FileRole.COMPONENT, where)
            if len(content) != size or sha256_hex(content) != sha:
                raise _refuse(
                    where, f"{_blob_path(sha)} does not match its recorded size and sha256."
                )
            self.blobs[sha] = content
        return self.blobs[sha]


def _components(
    item: Mapping[str, Any], reader: _Reader, where: str
) -> tuple[CapsuleComponent, ...]:
    components = []
    for index, entry in enumerate(_get(item, "components", (list,), where)):
        at = f"{where} components[{index}]"
        if not isinstance(entry, dict):
            raise _refuse(at, "is not an object.")
        sha = _get(entry, "sha256", (str,), at)
        size = _get(entry, "size", (int,), at)
        if len(sha) != 64 or any(ch not in "0123456789abcdef" for ch in sha):
            raise _refuse(at, "'sha256' is not 64 lowercase hex digits.", field="sha256")
        components.append(
            CapsuleComponent(
                logical_path=_get(entry, "path", (str,), at),
                type=_get(entry, "type", (str,), at),
                media_type=_get(entry, "media_type", (str,), at),
                sha256=sha,
                size=size,
                content=reader.blob(sha, size, at),
            )
        )
    return tuple(components)


def _conversation_read(
    review: Mapping[str, Any], number: int, where: str
) -> tuple[tuple[BackupComment, ...], tuple[BackupApproval, ...], int | None]:
    """The version-2 keys of ``review``: comments, approvals and the answered revision."""
    comments = []
    for index, item in enumerate(_get(review, "comments", (list,), where)):
        at = f"{where} comments[{index}]"
        if not isinstance(item, dict):
            raise _refuse(at, "is not an object.")
        body = _get(item, "body", (str,), at)
        line = _get(item, "line", (int, type(None)), at)
        if not body.strip() or (line is not None and line < 1):
            raise _refuse(at, "a comment needs a body and a line of 1 or more.")
        comments.append(
            BackupComment(
                author=_get(item, "author", (str, type(None)), at),
                body=body,
                line=line,
                action=_get(item, "action", (str,), at),
                created_at=_parse_time(item, "created_at", at),
            )
        )
    approvals = []
    for index, item in enumerate(_get(review, "approvals", (list,), where)):
        at = f"{where} approvals[{index}]"
        if not isinstance(item, dict):
            raise _refuse(at, "is not an object.")
        approvals.append(
            BackupApproval(
                user=_get(item, "user", (str, type(None)), at),
                created_at=_parse_time(item, "created_at", at),
            )
        )
    answers = _get(review, "answers_revision_number", (int, type(None)), where)
    if answers is not None and not 1 <= answers < number:
        raise _refuse(where, f"answers_revision_number {answers} is not an earlier revision.")
    return tuple(comments), tuple(approvals), answers


def _outcomes_read(item: Mapping[str, Any], where: str) -> tuple[BackupOutcome, ...]:
    """The version-4 ``outcomes`` of a revision."""
    outcomes = []
    for index, entry in enumerate(_get(item, "outcomes", (list,), where)):
        at = f"{where} outcomes[{index}]"
        if not isinstance(entry, dict):
            raise _refuse(at, "is not an object.")
        day = _get(entry, "date", (str,), at)
        try:
            datetime.strptime(day, "%Y-%m-%d")
        except ValueError:
            raise _refuse(at, "date is not YYYY-MM-DD.") from None
        note = _get(entry, "note", (str,), at)
        if len(note) > 1000:
            raise _refuse(at, "a note holds at most 1,000 characters.")
        outcomes.append(
            BackupOutcome(
                date=day,
                reporter=_get(entry, "reporter", (str,), at)[:64],
                client_name=_get(entry, "client_name", (str,), at)[:100],
                outcome=_choice(entry, "outcome", OUTCOMES, at),
                note=note,
                reported_at=_parse_time(entry, "reported_at", at),
            )
        )
    return tuple(outcomes)


def _scan_override_read(item: Mapping[str, Any], where: str) -> BackupScanOverride | None:
    """The version-5 ``scan_override`` of a revision: null, or who, why and when."""
    entry = _get(item, "scan_override", (dict, type(None)), where)
    if entry is None:
        return None
    at = f"{where} scan_override"
    reason = _get(entry, "reason", (str,), at)
    if not reason.strip() or len(reason) > OVERRIDE_REASON_MAX:
        raise _refuse(at, f"a reason of 1 to {OVERRIDE_REASON_MAX:,} characters is needed.")
    return BackupScanOverride(
        by=_get(entry, "by", (str,), at)[:200],
        reason=reason,
        at=_parse_time(entry, "at", at),
    )


def _revision_read(
    item: Any, slug: str, expected_number: int, reader: _Reader, version: int
) -> BackupRevision:
    where = f"{BACKUP_JSON} {slug} r{expected_number}"
    if not isinstance(item, dict):
        raise _refuse(where, "is not an object.")
    number = _get(item, "revision_number", (int,), where)
    if number != expected_number:
        raise _refuse(where, f"revision numbers must run 1, 2, 3 … without gaps; found {number}.")
    parent = _get(item, "parent_revision_number", (int, type(None)), where)
    if parent is not None and not 1 <= parent < number:
        raise _refuse(where, f"parent_revision_number {parent} is not an earlier revision.")
    review = _get(item, "review", (dict,), where)
    comments, approvals, answers = (
        _conversation_read(review, number, where + " review") if version >= 2 else ((), (), None)
    )
    name = _get(item, "name", (str,), where)
    description = _get(item, "description", (str,), where)
    frontmatter = _get(item, "frontmatter", (dict,), where)
    components = _components(item, reader, where)

    # The manifest's JSON is the record; SKILL.md must be exactly what the writer makes of it
    # plus the body (checked by writing the header again: cheaper than parsing YAML).
    md_path = _skill_md_path(slug, number)
    header = serialize_skill_md(merge_frontmatter(name, description, frontmatter), "")
    raw = reader.file(md_path, FileRole.SKILL_MD, where)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _refuse(md_path, "is not valid UTF-8.") from exc
    if not text.startswith(header):
        raise _refuse(md_path, f"its frontmatter differs from {where} in {BACKUP_JSON}.")
    body = text[len(header) :]
    recorded = _get(item, "canonical_hash", (str,), where)
    computed = canonical_hash(
        name=name,
        description=description,
        frontmatter=frontmatter,
        instruction_body=body,
        components=[(c.logical_path, c.type, c.sha256) for c in components],
    )
    if computed != recorded:
        raise _refuse(
            where,
            f"the content hashes to {computed}, not the recorded canonical_hash {recorded}; "
            "the backup was changed after it was written.",
            recorded=recorded,
            computed=computed,
        )
    revision = BackupRevision(
        revision_number=number,
        state=_choice(item, "state", STATES, where),
        name=name,
        description=description,
        frontmatter=frontmatter,
        instruction_body=body,
        canonical_hash=recorded,
        components=components,
        parent_revision_number=parent,
        author=_get(item, "author", (str, type(None)), where),
        message=_get(item, "message", (str,), where),
        source=_choice(item, "source", SOURCES, where),
        source_ref=_get(item, "source_ref", (str,), where),
        created_at=_parse_time(item, "created_at", where),
        state_changed_at=_parse_time(item, "state_changed_at", where, optional=True),
        reviewed_by=_get(review, "reviewed_by", (str, type(None)), where + " review"),
        reviewed_at=_parse_time(review, "reviewed_at", where + " review", optional=True),
        review_comment=_get(review, "comment", (str,), where + " review"),
        comments=comments,
        approvals=approvals,
        answers_revision_number=answers,
        outcomes=_outcomes_read(item, where) if version >= 4 else (),
        scan_override=_scan_override_read(item, where) if version >= 5 else None,
    )
    with located(f"{md_path.rpartition('/')[0]}/"):
        validate_bundle(revision.bundle())
    return revision


def _skill_read(item: Any, index: int, reader: _Reader, version: int) -> BackupSkill:
    where = f"{BACKUP_JSON} skills[{index}]"
    if not isinstance(item, dict):
        raise _refuse(where, "is not an object.")
    slug = _get(item, "slug", (str,), where)
    with located(f"{where} "):
        validate_slug(slug)
    revisions = tuple(
        _revision_read(rev, slug, number, reader, version)
        for number, rev in enumerate(_get(item, "revisions", (list,), where), start=1)
    )
    if sum(rev.state == "published" for rev in revisions) > 1:
        raise _refuse(where, f"{slug} has more than one published revision.")
    notes: list[str] = []
    return BackupSkill(
        slug=slug,
        status=_choice(item, "status", STATUSES, where),
        created_at=_parse_time(item, "created_at", where),
        revisions=revisions,
        labels=_labels_read(item, where, revisions, notes) if version >= 3 else (),
        notes=tuple(notes),
    )


def _labels_read(
    item: Mapping[str, Any], where: str, revisions: tuple[BackupRevision, ...], notes: list[str]
) -> tuple[BackupLabel, ...]:
    """The skill's labels; one on a rejected revision is left out with a note in ``notes``."""
    labels = []
    by_number = {rev.revision_number: rev for rev in revisions}
    for index, entry in enumerate(_get(item, "labels", (list,), where)):
        at = f"{where} labels[{index}]"
        if not isinstance(entry, dict):
            raise _refuse(at, "is not an object.")
        name = _get(entry, "name", (str,), at)
        with located(f"{at} "):
            validate_label_name(name)
        number = _get(entry, "revision_number", (int,), at)
        revision = by_number.get(number)
        if revision is None:
            raise _refuse(at, f"points at revision {number}, which the skill does not have.")
        if is_rejected(state=revision.state, reviewed=revision.reviewed_at is not None):
            notes.append(
                f"{item['slug']}: label '{name}' pointed at revision {number}, which was rejected"
                " in review; it was left out (a label never points at a rejected revision)."
            )
            continue
        labels.append(
            BackupLabel(
                name=name,
                revision_number=number,
                moved_by=_get(entry, "moved_by", (str, type(None)), at),
                moved_at=_parse_time(entry, "moved_at", at),
            )
        )
    names = [label.name for label in labels]
    if len(set(names)) != len(names):
        raise _refuse(where, "a label name appears twice.")
    return tuple(labels)


@contextmanager
def _backup_open(data: bytes | BinaryIO) -> Iterator[tuple[list[str], RawRead]]:
    """The backup ZIP's files and reader, once it is a readable ZIP holding a manifest."""
    try:
        with zip_files_open(data, limits=BACKUP_LIMITS) as (names, read):
            if BACKUP_JSON not in names:
                raise UnsupportedFormat(
                    f"This is not a workspace backup: it has no {BACKUP_JSON}.",
                    details={"path": BACKUP_JSON},
                )
            yield names, read
    except XmemoError:
        raise
    except (OSError, EOFError, ValueError) as exc:  # a truncated or corrupt ZIP
        raise UnsupportedFormat(f"The backup cannot be read ({exc}).") from exc


def backup_format_check(data: bytes | BinaryIO) -> None:
    """Refuse, before the upload is stored, what is no backup at all: not a ZIP, a truncated
    one (no central directory), or one without a manifest. Reads the directory only."""
    with _backup_open(data):
        pass


def backup_read(data: bytes | BinaryIO) -> Backup:
    """The verified content of a backup ZIP; any problem raises with the path it concerns."""
    with _backup_open(data) as (names, read):
        raw = read(BACKUP_JSON, MANIFEST_MAX_BYTES + 1)
        if len(raw) > MANIFEST_MAX_BYTES:
            raise UnsafeArchive(
                f"{BACKUP_JSON} is larger than {MANIFEST_MAX_BYTES:,} bytes.",
                details={"path": BACKUP_JSON, "limit": MANIFEST_MAX_BYTES},
            )
        manifest = load_json_object(raw, BACKUP_JSON)
        if manifest.get("format") != BACKUP_FORMAT:
            raise UnsupportedFormat(
                f"{BACKUP_JSON} is not a workspace backup manifest (format is not "
                f"{BACKUP_FORMAT!r}).",
                details={"path": BACKUP_JSON},
            )
        version = manifest.get("format_version")
        if isinstance(version, bool) or version not in READABLE_FORMAT_VERSIONS:
            raise UnsupportedFormat(
                f"{BACKUP_JSON} has format_version {version!r}; this server reads versions "
                f"{', '.join(map(str, READABLE_FORMAT_VERSIONS))}.",
                details={"path": BACKUP_JSON},
            )
        reader = _Reader(names, read)
        workspace = _get(manifest, "workspace", (dict,), BACKUP_JSON)
        skills = tuple(
            _skill_read(item, index, reader, version)
            for index, item in enumerate(_get(manifest, "skills", (list,), BACKUP_JSON))
        )
        slugs = [skill.slug for skill in skills]
        if len(set(slugs)) != len(slugs):
            raise _refuse(BACKUP_JSON, "a slug appears twice.")
        unlisted = sorted(reader.names - reader.used)
        if unlisted:
            raise _refuse(
                unlisted[0], f"is not listed in {BACKUP_JSON}; a backup holds nothing else."
            )
        at = f"{BACKUP_JSON} workspace"
        mode = None
        if version >= 5:
            mode = _get(workspace, "permission_mode", (str, type(None)), at)
            if mode is not None and mode not in PERMISSION_MODES:
                raise _refuse(
                    at, f"'permission_mode' must be one of {', '.join(PERMISSION_MODES)}."
                )
        return Backup(
            workspace_slug=_get(workspace, "slug", (str,), at),
            workspace_name=_get(workspace, "name", (str,), at),
            skills=skills,
            permission_mode=mode,
        )
