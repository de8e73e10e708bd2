"""Safe, bounded reading of skill ZIPs: one skill, a pack, or a repository archive's folder.

Layout (docs/contract.md §8): ``SKILL.md`` or ``skill.json`` at the root is one skill; else
each top-level skill folder is one (a lone non-skill folder is unwrapped once); a folder with
``capsule.json`` is a Source Capsule; a ZIP with ``backup.json`` is refused (it is restored).
Hostile input is refused from the headers before anything is decompressed where they suffice,
and read under hard caps where they do not (headers can lie); each refusal names its entry.
The layout and every rule: docs/hardening.md, *Imported archives*."""

from __future__ import annotations

import io
import re
import stat
import struct
import zipfile
import zlib
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO

from skills_app.domain.bundle import SkillBundle
from skills_app.errors import UnsafeArchive, UnsupportedFormat, ValidationFailed
from skills_app.formats.files import BACKUP_JSON, SKILL_JSON, SKILL_MD, RawRead, is_junk
from skills_app.formats.folder import ZIP_SOURCE, folder_bundle_read

_MANIFESTS = (SKILL_MD, SKILL_JSON)
_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}
_ENCRYPTED_FLAG = 0x1
_DRIVE = re.compile(r"[A-Za-z]:")

# End-of-central-directory record (APPNOTE 4.3.16) and the ZIP64 locator that precedes it.
_EOCD_SIGNATURE = b"PK\x05\x06"
_EOCD_SIZE = 22
_MAX_COMMENT = 0xFFFF
_ZIP64_LOCATOR_SIGNATURE = b"PK\x06\x07"
_ZIP64_LOCATOR_SIZE = 20
# Generous per-entry size of a central directory record (46 bytes + name + extra + comment).
_CENTRAL_BYTES_PER_ENTRY = 512


@dataclass(frozen=True)
class ArchiveLimits:
    max_entries: int = 5_000
    max_total_bytes: int = 64 * 1024 * 1024
    max_ratio: int = 100
    bomb_min_bytes: int = 1024 * 1024


DEFAULT_LIMITS = ArchiveLimits()


def _unsafe(name: str, reason: str) -> UnsafeArchive:
    return UnsafeArchive(f"The archive entry {name!r} {reason}.", details={"path": name})


def _check_end_record(stream: BinaryIO, limits: ArchiveLimits) -> None:
    """Bound the central directory before ``zipfile`` reads it, finding the record as it does."""
    size = stream.seek(0, io.SEEK_END)
    tail_size = min(size, _ZIP64_LOCATOR_SIZE + _EOCD_SIZE + _MAX_COMMENT)
    stream.seek(size - tail_size)
    tail = stream.read(tail_size)
    stream.seek(0)
    at = len(tail) - _EOCD_SIZE
    if at < 0 or tail[at : at + 4] != _EOCD_SIGNATURE or tail[-2:] != b"\0\0":
        at = tail.rfind(_EOCD_SIGNATURE)
    if at < 0 or len(tail) - at < _EOCD_SIZE:
        return  # not a ZIP at all: zipfile reports it
    locator = tail[max(at - _ZIP64_LOCATOR_SIZE, 0) : at]
    entries, central_size = struct.unpack_from("<HI", tail, at + 10)
    if locator.startswith(_ZIP64_LOCATOR_SIGNATURE) or entries == 0xFFFF:
        raise UnsafeArchive("ZIP64 archives are not accepted; a skill archive never needs one.")
    if entries > limits.max_entries or central_size > limits.max_entries * _CENTRAL_BYTES_PER_ENTRY:
        raise UnsafeArchive(
            f"The archive lists {entries:,} entries in a {central_size:,}-byte directory; "
            f"at most {limits.max_entries:,} entries are accepted.",
            details={"limit": limits.max_entries, "count": entries},
        )


def _check_entry(info: zipfile.ZipInfo) -> None:
    name = info.orig_filename
    if "\0" in name:
        raise _unsafe(name, "contains a NUL byte")
    if "\\" in name:
        raise _unsafe(name, "uses '\\' in its path; ZIP paths use '/'")
    if name.startswith("/") or _DRIVE.match(name):
        raise _unsafe(name, "has an absolute path")
    segments = name.removesuffix("/").split("/")
    if ".." in segments:
        raise _unsafe(name, "climbs out of its folder with '..' (zip-slip)")
    if "" in segments or "." in segments:
        raise _unsafe(name, "has an empty or '.' path segment")
    if info.flag_bits & _ENCRYPTED_FLAG:
        raise _unsafe(name, "is encrypted")
    if stat.S_ISLNK(info.external_attr >> 16):
        raise _unsafe(name, "is a symbolic link")
    if info.compress_type not in _METHODS:
        raise UnsupportedFormat(
            f"The archive entry {name!r} uses compression method {info.compress_type}; "
            "use stored or deflated entries (any ordinary ZIP tool does).",
            details={"path": name},
        )


def _selection_base(infos: list[zipfile.ZipInfo], subfolder: str | None) -> str:
    """The prefix every read entry has: "" or a repository archive's ``WRAPPER/PATH/``."""
    if subfolder is None:
        return ""
    wrappers = {info.orig_filename.split("/", 1)[0] for info in infos}
    if len(wrappers) != 1:
        raise UnsafeArchive("A repository archive must hold exactly one top-level folder.")
    wrapper = wrappers.pop()
    folder = subfolder.strip("/")
    return f"{wrapper}/{folder}/" if folder else f"{wrapper}/"


def _select(infos: list[zipfile.ZipInfo], base: str) -> dict[str, zipfile.ZipInfo]:
    """Checked file entries under ``base`` by path relative to it, in archive order."""
    files: dict[str, zipfile.ZipInfo] = {}
    folded: dict[str, str] = {}
    for info in infos:
        name = info.orig_filename
        if not name.startswith(base):
            continue
        _check_entry(info)
        relative = name[len(base) :]
        if info.is_dir() or stat.S_ISDIR(info.external_attr >> 16) or is_junk(relative):
            continue
        if relative in files:
            raise _unsafe(name, "appears twice")
        other = folded.setdefault(relative.casefold(), relative)
        if other != relative:
            raise _unsafe(name, f"differs from {base + other!r} only by letter case")
        files[relative] = info
    if not files:
        where = f"The folder {base!r} of the archive" if base else "The archive"
        raise ValidationFailed(f"{where} holds no files.", details={"path": base})
    return files


def _check_declared_sizes(infos: Collection[zipfile.ZipInfo], limits: ArchiveLimits) -> None:
    total = 0
    for info in infos:
        size, packed = info.file_size, max(info.compress_size, 1)
        if size >= limits.bomb_min_bytes and size > limits.max_ratio * packed:
            raise _unsafe(
                info.orig_filename,
                f"expands from {packed:,} to {size:,} bytes (more than {limits.max_ratio}:1); "
                "it looks like a zip bomb",
            )
        total += size
        if total > limits.max_total_bytes:
            raise _unsafe(
                info.orig_filename,
                f"takes the archive past {limits.max_total_bytes:,} uncompressed bytes",
            )


def _folder_reader(
    archive: zipfile.ZipFile, files: dict[str, zipfile.ZipInfo], prefix: str
) -> RawRead:
    def read(name: str, max_bytes: int) -> bytes:
        info = files[prefix + name]
        try:
            with archive.open(info) as stream:
                return stream.read(max_bytes)
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            raise _unsafe(info.orig_filename, f"is corrupt ({exc})") from exc

    return read


def _is_skill(prefix: str, names: Collection[str]) -> bool:
    return any(prefix + manifest in names for manifest in _MANIFESTS)


def _skill_folders(names: Collection[str], *, base: str, where: str, unwrap: bool) -> list[str]:
    """Prefixes (relative, "" or ending in '/') of the skill folders below ``base``."""
    if _is_skill(base, names):
        return [base]
    folders: dict[str, None] = {}  # ordered set, archive order
    loose = False
    for name in names:
        if name.startswith(base):
            head, slash, _ = name[len(base) :].partition("/")
            if slash:
                folders.setdefault(f"{base}{head}/")
            else:
                loose = True
    skills = [folder for folder in folders if _is_skill(folder, names)]
    if not skills and unwrap and len(folders) == 1 and not loose:
        return _skill_folders(names, base=next(iter(folders)), where=where, unwrap=False)
    if not skills:
        raise ValidationFailed(
            f"{where}{base}{SKILL_MD} is missing: put SKILL.md at the root of the archive, or "
            "inside one top-level folder per skill.",
            details={"path": f"{where}{base}{SKILL_MD}"},
        )
    strays = [folder for folder in folders if folder not in skills]
    if strays:
        raise ValidationFailed(
            f"{where}{strays[0]} has no {SKILL_MD}: every top-level folder of a pack must be a "
            "skill folder.",
            details={"path": f"{where}{strays[0]}{SKILL_MD}"},
        )
    return skills


@contextmanager
def _zip_open(data: bytes | BinaryIO, limits: ArchiveLimits) -> Iterator[zipfile.ZipFile]:
    """The ZIP, once its end record and entry count are within ``limits``."""
    stream: BinaryIO = io.BytesIO(data) if isinstance(data, bytes) else data
    _check_end_record(stream, limits)
    try:
        archive = zipfile.ZipFile(stream)
    except (zipfile.BadZipFile, EOFError, ValueError) as exc:
        raise UnsupportedFormat(f"The upload is not a readable ZIP archive ({exc}).") from exc
    with archive:
        count = len(archive.infolist())
        if count > limits.max_entries:
            raise UnsafeArchive(
                f"The archive holds {count:,} entries; at most {limits.max_entries:,} "
                "are accepted.",
                details={"limit": limits.max_entries, "count": count},
            )
        yield archive


@contextmanager
def zip_files_open(
    data: bytes | BinaryIO, *, limits: ArchiveLimits = DEFAULT_LIMITS
) -> Iterator[tuple[list[str], RawRead]]:
    """A ZIP's files (archive order, junk skipped) and a reader, under every rule above: for
    readers of other layouts than skill folders (workspace backups)."""
    with _zip_open(data, limits) as archive:
        files = _select(archive.infolist(), "")
        _check_declared_sizes(files.values(), limits)
        yield list(files), _folder_reader(archive, files, "")


def zip_bundles_read(
    data: bytes | BinaryIO,
    *,
    source: str = ZIP_SOURCE,
    source_ref: str = "",
    subfolder: str | None = None,
    limits: ArchiveLimits = DEFAULT_LIMITS,
) -> list[SkillBundle]:
    """Every skill in a ZIP, validated, in archive order; all or nothing.

    ``data`` is the ZIP's bytes or a seekable binary file. ``subfolder`` reads a repository
    archive (GitHub's ``REPO-REF/…`` wrapper): only ``WRAPPER/subfolder/`` is read, as if it
    were the archive root (``""`` = the whole repository); entries elsewhere are never opened.
    """
    with _zip_open(data, limits) as archive:
        infos = archive.infolist()
        base = _selection_base(infos, subfolder)
        files = _select(infos, base)
        if BACKUP_JSON in files:
            raise UnsupportedFormat(
                f"This is a workspace backup ({BACKUP_JSON}): restore it into an empty team "
                "workspace (POST /v1/workspaces/{ws}/restore) instead of importing it.",
                details={"path": BACKUP_JSON},
            )
        _check_declared_sizes(files.values(), limits)
        bundles = []
        for folder in _skill_folders(files.keys(), base="", where=base, unwrap=True):
            folder_path = base + folder
            bundles.append(
                folder_bundle_read(
                    [name[len(folder) :] for name in files if name.startswith(folder)],
                    _folder_reader(archive, files, folder),
                    where=folder_path,
                    folder_name=folder_path.rstrip("/").rpartition("/")[2],
                    source=source,
                    source_ref=source_ref,
                )
            )
        return bundles
