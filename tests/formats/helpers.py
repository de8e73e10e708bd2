"""Builders for the import tests: ZIPs from folders or dicts, raw hostile ZIPs, capsule rows."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from skills_app.domain.bundle import SkillBundle
from skills_app.domain.canonical import canonical_hash, sha256_hex
from skills_app.formats import capsule
from skills_app.formats.capsule import CapsuleRevision

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "skills"
FIXTURE_NAMES = sorted(path.name for path in FIXTURES.iterdir() if path.is_dir())

SKILL_MD = b"---\nname: tiny\ndescription: A tiny skill for hostile-archive tests.\n---\nDo it.\n"


def folder_files(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def zip_of(files: Mapping[str, bytes], *, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def zip_infos(entries: Iterable[tuple[zipfile.ZipInfo, bytes]]) -> bytes:
    """A ZIP from hand-made ZipInfos (symlink modes, flags, odd names, duplicates)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for info, data in entries:
            archive.writestr(info, data)
    return buffer.getvalue()


def fixture_zip(name: str, *, prefix: str | None = None) -> bytes:
    folder = FIXTURES / name
    top = name if prefix is None else prefix
    return zip_of(
        {f"{top}/{path}" if top else path: data for path, data in folder_files(folder).items()}
    )


@dataclass(frozen=True)
class RawEntry:
    """One entry written byte by byte, so sizes, CRC and flags can lie."""

    name: str
    payload: bytes  # already compressed when method is deflate
    file_size: int
    crc: int
    method: int = zipfile.ZIP_DEFLATED
    flags: int = 0
    external_attr: int = 0o100644 << 16


def raw_zip(entries: Iterable[RawEntry]) -> bytes:
    out = io.BytesIO()
    central = io.BytesIO()
    count = 0
    for entry in entries:
        name = entry.name.encode("utf-8")
        offset = out.tell()
        sizes = (entry.crc, len(entry.payload), entry.file_size)
        out.write(
            struct.pack(
                "<IHHHHHIIIHH",
                0x04034B50,
                20,
                entry.flags,
                entry.method,
                0,
                0x21,
                *sizes,
                len(name),
                0,
            )
        )
        out.write(name + entry.payload)
        central.write(
            struct.pack(
                "<IHHHHHHIIIHHHHHII",
                0x02014B50,
                0x0314,
                20,
                entry.flags,
                entry.method,
                0,
                0x21,
                *sizes,
                len(name),
                0,
                0,
                0,
                0,
                entry.external_attr,
                offset,
            )
            + name
        )
        count += 1
    start = out.tell()
    out.write(central.getvalue())
    out.write(
        struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, len(central.getvalue()), start, 0)
    )
    return out.getvalue()


def raw_entry(name: str, data: bytes, *, flags: int = 0) -> RawEntry:
    """``data`` deflated under ``name``, with honest sizes and CRC."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    payload = compressor.compress(data) + compressor.flush()
    return RawEntry(name, payload, len(data), zlib.crc32(data), flags=flags)


def zeros_deflated(total: int, *, chunk: int = 1 << 20) -> tuple[bytes, int]:
    """A raw deflate stream of ``total`` zero bytes and its CRC, built in well under a second.

    After a full flush the compressor's state is reset, so every chunk of zeros compresses to
    the same bytes: compress one, repeat it.
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(chunk)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(total // chunk):
        crc = zlib.crc32(zeros, crc)
    return block * (total // chunk) + compressor.flush(), crc


def capsule_revision(
    bundle: SkillBundle, *, number: int = 1, state: str = "published"
) -> CapsuleRevision:
    """The export row a saved ``bundle`` would give (what the export job fills from the
    database)."""
    assert bundle.slug is not None
    return capsule.capsule_revision(
        bundle,
        skill_id=f"skill_{bundle.slug}",
        slug=bundle.slug,
        workspace="acme",
        revision_id=f"rev_{bundle.slug}_{number}",
        revision_number=number,
        state=state,
        canonical_hash=bundle_hash(bundle),
    )


def bundle_hash(bundle: SkillBundle) -> str:
    return canonical_hash(
        name=bundle.name,
        description=bundle.description,
        frontmatter=bundle.frontmatter,
        instruction_body=bundle.instruction_body,
        components=[
            (c.logical_path, c.type, sha256_hex(c.content)) for c in bundle.components or ()
        ],
    )
