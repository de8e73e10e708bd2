"""The ZIP reader: layouts, component typing, and every kind of hostile archive."""

from __future__ import annotations

import io
import random
import stat
import time
import tracemalloc
import warnings
import zipfile
from collections.abc import Callable

import pytest

from skills_app.errors import (
    BodyTooLarge,
    ComponentTooLarge,
    TooManyComponents,
    UnsafeArchive,
    UnsupportedFormat,
    ValidationFailed,
    XmemoError,
)
from skills_app.formats.archive import ArchiveLimits, zip_bundles_read
from tests.formats.helpers import (
    SKILL_MD,
    RawEntry,
    fixture_zip,
    raw_entry,
    raw_zip,
    zeros_deflated,
    zip_infos,
    zip_of,
)

GIB = 1 << 30
MEMORY_BOUND = 64 * 1024 * 1024


def _skill_md(name: str) -> bytes:
    return f"---\nname: {name}\ndescription: The {name} skill.\n---\n# {name}\n".encode()


# --- layouts ----------------------------------------------------------------------------------


def test_root_skill_md_makes_one_skill_with_typed_components() -> None:
    data = zip_of(
        {
            "SKILL.md": SKILL_MD,
            "scripts/run.sh": b"#!/bin/sh\necho hi\n",
            "reference/api.md": b"# API\n",
            "references/deep/more.md": b"# More\n",
            "examples/one.md": b"example\n",
            "templates/t.md": b"template\n",
            "assets/notes.txt": b"an asset, even though it is text\n",
            "guide.md": b"# Guide\n",
            "data/blob.bin": b"\x00\x01\xff\xfe",
        }
    )
    [bundle] = zip_bundles_read(data, source_ref="upload.zip")
    types = {c.logical_path: (c.type, c.media_type) for c in bundle.components or ()}
    assert types == {
        "scripts/run.sh": ("script", "text/x-shellscript"),
        "reference/api.md": ("reference", "text/markdown"),
        "references/deep/more.md": ("reference", "text/markdown"),
        "examples/one.md": ("example", "text/markdown"),
        "templates/t.md": ("template", "text/markdown"),
        "assets/notes.txt": ("artifact", "text/plain"),
        "guide.md": ("document", "text/markdown"),
        "data/blob.bin": ("artifact", "application/octet-stream"),
    }
    assert (bundle.name, bundle.slug, bundle.source, bundle.source_ref) == (
        "tiny",
        "tiny",
        "import-zip",
        "upload.zip",
    )
    assert bundle.instruction_body == "Do it.\n"


def test_one_top_level_folder_names_the_slug() -> None:
    [bundle] = zip_bundles_read(zip_of({"my-skill/SKILL.md": SKILL_MD, "my-skill/a.md": b"a"}))
    assert bundle.slug == "my-skill"
    assert [c.logical_path for c in bundle.components or ()] == ["a.md"]


def test_folder_name_that_is_not_a_slug_falls_back_to_the_name() -> None:
    [bundle] = zip_bundles_read(zip_of({"My Skill v2/SKILL.md": SKILL_MD}))
    assert bundle.slug == "tiny"


def test_pack_reads_every_skill_folder_in_archive_order_and_ignores_loose_files() -> None:
    data = zip_of(
        {
            "README.md": b"# A collection\n",
            "zeta/SKILL.md": _skill_md("zeta"),
            "alpha/SKILL.md": _skill_md("alpha"),
            "alpha/scripts/x.py": b"print(1)\n",
        }
    )
    bundles = zip_bundles_read(data)
    assert [b.slug for b in bundles] == ["zeta", "alpha"]
    assert [c.logical_path for c in bundles[1].components or ()] == ["scripts/x.py"]
    assert bundles[0].components == ()


def test_single_wrapper_folder_around_a_pack_is_unwrapped() -> None:
    data = zip_of({"skills/a/SKILL.md": _skill_md("a"), "skills/b/SKILL.md": _skill_md("b")})
    assert [b.slug for b in zip_bundles_read(data)] == ["a", "b"]


def test_pack_with_a_folder_that_is_not_a_skill_is_refused_naming_it() -> None:
    data = zip_of({"a/SKILL.md": _skill_md("a"), "docs/intro.md": b"hi"})
    with pytest.raises(ValidationFailed, match=r"docs/ has no SKILL\.md"):
        zip_bundles_read(data)


def test_skill_json_folder_in_a_zip() -> None:
    [bundle] = zip_bundles_read(fixture_zip("disk-usage"), source_ref="tools.zip")
    assert bundle.slug == "disk-usage"
    # What the folder holds names the source, not the ZIP it travelled in.
    assert (bundle.source, bundle.source_ref) == ("import-skill-json", "tools.zip")
    assert {c.logical_path: c.type for c in bundle.components or ()} == {
        "du.py": "script",
        "lib/__init__.py": "document",
        "lib/humanize.py": "document",
    }


def test_junk_and_directory_entries_are_skipped() -> None:
    data = zip_infos(
        [
            (zipfile.ZipInfo("s/"), b""),
            (zipfile.ZipInfo("s/SKILL.md"), SKILL_MD),
            (zipfile.ZipInfo("s/.DS_Store"), b"\x00junk"),
            (zipfile.ZipInfo("__MACOSX/s/._SKILL.md"), b"\x00junk"),
            (zipfile.ZipInfo("s/.git/config"), b"[core]"),
            (zipfile.ZipInfo("s/refs/Thumbs.db"), b"\x00"),
            (zipfile.ZipInfo("s/references/"), b""),
            (_info("s/examples", mode=stat.S_IFDIR | 0o755), b""),  # a folder without its '/'
            (zipfile.ZipInfo("s/references/a.md"), b"a"),
        ]
    )
    [bundle] = zip_bundles_read(data)
    assert [c.logical_path for c in bundle.components or ()] == ["references/a.md"]


def test_binary_file_handle_is_accepted() -> None:
    [bundle] = zip_bundles_read(io.BytesIO(zip_of({"SKILL.md": SKILL_MD})))
    assert bundle.name == "tiny"


def test_subfolder_of_a_repository_archive_reads_only_that_folder() -> None:
    symlink = zipfile.ZipInfo("repo-main/elsewhere/link")
    symlink.external_attr = (stat.S_IFLNK | 0o777) << 16
    data = zip_infos(
        [
            (zipfile.ZipInfo("repo-main/README.md"), b"# repo"),
            (symlink, b"/etc/passwd"),  # outside the selection: never read, never refused
            (zipfile.ZipInfo("repo-main/skills/tiny/SKILL.md"), SKILL_MD),
            (zipfile.ZipInfo("repo-main/skills/tiny/references/r.md"), b"r"),
        ]
    )
    [bundle] = zip_bundles_read(data, subfolder="skills/tiny")
    assert bundle.slug == "tiny"
    assert [c.logical_path for c in bundle.components or ()] == ["references/r.md"]
    with pytest.raises(ValidationFailed, match="repo-main/nope/"):
        zip_bundles_read(data, subfolder="nope")


# --- hostile archives -------------------------------------------------------------------------


def _info(name: str, *, mode: int = 0o100644) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = mode << 16
    return info


def _many_files() -> bytes:
    return zip_of({"SKILL.md": SKILL_MD} | {f"references/r{i:02d}.md": b"r" for i in range(51)})


def _duplicate() -> bytes:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile warns about the duplicate name
        return zip_infos(
            [(_info("SKILL.md"), SKILL_MD), (_info("a.md"), b"1"), (_info("a.md"), b"2")]
        )


# (case id, archive builder, error class, text the message must contain)
HOSTILE: list[tuple[str, Callable[[], bytes], type[XmemoError], str]] = [
    ("51 components", _many_files, TooManyComponents, "51 component files"),
    (
        "component of 131,073 incompressible bytes",
        lambda: zip_of(
            {"SKILL.md": SKILL_MD, "assets/big.bin": random.Random(7).randbytes(131_073)}
        ),
        ComponentTooLarge,
        "assets/big.bin",
    ),
    (
        "component of 131,073 compressible bytes (too large, not a bomb)",
        lambda: zip_of({"s/SKILL.md": SKILL_MD, "s/notes.md": b"a" * 131_073}),
        ComponentTooLarge,
        "s/notes.md",
    ),
    (
        "body of 65,537 bytes",
        lambda: zip_of({"big/SKILL.md": SKILL_MD + b"x" * (65_537 - len(b"Do it.\n"))}),
        BodyTooLarge,
        "big/SKILL.md",
    ),
    (
        "SKILL.md past its read cap",
        lambda: zip_of({"s/SKILL.md": SKILL_MD + random.Random(3).randbytes(300_000)}),
        BodyTooLarge,
        "s/SKILL.md is larger than 262,144 bytes",
    ),
    (
        "zip-slip",
        lambda: zip_infos([(_info("SKILL.md"), SKILL_MD), (_info("../../etc/cron.d/x"), b"x")]),
        UnsafeArchive,
        "../../etc/cron.d/x",
    ),
    (
        "zip-slip in the middle",
        lambda: zip_infos([(_info("s/SKILL.md"), SKILL_MD), (_info("s/a/../../x.md"), b"x")]),
        UnsafeArchive,
        "s/a/../../x.md",
    ),
    (
        "absolute path",
        lambda: zip_infos([(_info("SKILL.md"), SKILL_MD), (_info("/etc/passwd"), b"x")]),
        UnsafeArchive,
        "/etc/passwd",
    ),
    (
        "windows drive path",
        lambda: zip_infos([(_info("SKILL.md"), SKILL_MD), (_info("C:/boot.ini"), b"x")]),
        UnsafeArchive,
        "C:/boot.ini",
    ),
    (
        "backslash",
        lambda: zip_infos([(_info("SKILL.md"), SKILL_MD), (_info("scripts\\run.sh"), b"x")]),
        UnsafeArchive,
        "scripts",
    ),
    (
        "symlink entry",
        lambda: zip_infos(
            [
                (_info("SKILL.md"), SKILL_MD),
                (_info("references/passwd", mode=0o120777), b"/etc/passwd"),
            ]
        ),
        UnsafeArchive,
        "references/passwd",
    ),
    (
        "encrypted entry",
        lambda: raw_zip(
            [raw_entry("SKILL.md", SKILL_MD), raw_entry("secret.md", b"??", flags=0x1)]
        ),
        UnsafeArchive,
        "secret.md",
    ),
    ("duplicate path", _duplicate, UnsafeArchive, "'a.md' appears twice"),
    (
        "case-colliding paths",
        lambda: zip_of({"SKILL.md": SKILL_MD, "Notes.md": b"1", "notes.md": b"2"}),
        UnsafeArchive,
        "notes.md",
    ),
    (
        "missing SKILL.md",
        lambda: zip_of({"skill/readme.md": b"hello"}),
        ValidationFailed,
        "skill/SKILL.md is missing",
    ),
    (
        "malformed YAML",
        lambda: zip_of({"s/SKILL.md": b"---\nname: [unclosed\n---\nbody\n"}),
        ValidationFailed,
        "s/SKILL.md",
    ),
    (
        "invalid UTF-8 in SKILL.md",
        lambda: zip_of({"s/SKILL.md": b"---\nname: x\ndescription: \xff\xfe\n---\n"}),
        ValidationFailed,
        "s/SKILL.md is not valid UTF-8",
    ),
    (
        "known frontmatter key of the wrong type",
        lambda: zip_of(
            {"s/SKILL.md": SKILL_MD.replace(b"---\nDo", b"max-iterations: -1\n---\nDo")}
        ),
        ValidationFailed,
        "max-iterations",
    ),
    (
        "bzip2 entry",
        lambda: zip_of({"SKILL.md": SKILL_MD}, method=zipfile.ZIP_BZIP2),
        UnsupportedFormat,
        "SKILL.md",
    ),
    (
        "not a ZIP",
        lambda: b"%PDF-1.7 definitely not a zip",
        UnsupportedFormat,
        "not a readable ZIP",
    ),
    (
        "foreign capsule.json",
        lambda: zip_of({"SKILL.md": SKILL_MD, "capsule.json": b'{"format": "other"}'}),
        ValidationFailed,
        "capsule.json is not a Source Capsule manifest",
    ),
]


@pytest.mark.parametrize(
    ("build", "error", "named"),
    [case[1:] for case in HOSTILE],
    ids=[case[0] for case in HOSTILE],
)
def test_hostile_archive_is_refused_with_the_spec_code_naming_the_entry(
    build: Callable[[], bytes], error: type[XmemoError], named: str
) -> None:
    with pytest.raises(error) as caught:
        zip_bundles_read(build())
    assert named in caught.value.message
    assert caught.value.code == error.code


def test_too_many_entries_is_refused_before_the_directory_is_parsed() -> None:
    data = zip_of({"SKILL.md": SKILL_MD} | {f"r{i}.md": b"" for i in range(20)})
    with pytest.raises(UnsafeArchive, match="21 entries"):
        zip_bundles_read(data, limits=ArchiveLimits(max_entries=20))


def test_zip64_end_record_is_refused() -> None:
    data = zip_of({"SKILL.md": SKILL_MD})
    eocd = data.rfind(b"PK\x05\x06")
    forged = data[:eocd] + b"PK\x06\x07" + bytes(16) + data[eocd:]
    with pytest.raises(UnsafeArchive, match="ZIP64"):
        zip_bundles_read(forged)


def test_total_uncompressed_size_is_bounded() -> None:
    data = zip_of({"s/SKILL.md": SKILL_MD} | {f"s/r{i}.md": b"a" * 100_000 for i in range(6)})
    with pytest.raises(UnsafeArchive, match="past 500,000 uncompressed bytes"):
        zip_bundles_read(data, limits=ArchiveLimits(max_total_bytes=500_000))


# --- zip bombs --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gib_of_zeros() -> tuple[bytes, int]:
    return zeros_deflated(GIB)


def _bomb(payload: bytes, crc: int, **header: int) -> bytes:
    honest = {"file_size": GIB, "crc": crc}
    return raw_zip(
        [
            raw_entry("bomb/SKILL.md", SKILL_MD),
            RawEntry("bomb/assets/zeros.bin", payload, **(honest | header)),
        ]
    )


def _refusal_within_bounds(data: bytes) -> XmemoError:
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(XmemoError) as caught:
            zip_bundles_read(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 5
    assert peak < MEMORY_BOUND, f"peak {peak:,} bytes"
    return caught.value


def test_gib_zip_bomb_is_refused_quickly_in_bounded_memory(gib_of_zeros: tuple[bytes, int]) -> None:
    payload, crc = gib_of_zeros
    assert len(payload) < 2 * 1024 * 1024  # a real bomb: ~1 MB that inflates to 1 GiB
    error = _refusal_within_bounds(_bomb(payload, crc))
    assert isinstance(error, UnsafeArchive)
    assert "bomb/assets/zeros.bin" in error.message
    assert "zip bomb" in error.message


def test_bomb_whose_header_claims_a_tiny_size_stops_at_the_claim(
    gib_of_zeros: tuple[bytes, int],
) -> None:
    payload, crc = gib_of_zeros
    error = _refusal_within_bounds(_bomb(payload, crc, file_size=1000))
    assert isinstance(error, UnsafeArchive)
    assert "bomb/assets/zeros.bin" in error.message
    assert "corrupt" in error.message


def test_bomb_whose_header_claims_a_plausible_size_is_cut_off_at_the_cap(
    gib_of_zeros: tuple[bytes, int],
) -> None:
    payload, crc = gib_of_zeros
    # 1 MiB - 1 byte is below the bomb floor and the ratio is "only" 1:1; the read must stop
    # one byte past the component cap, never inflate the gigabyte behind it.
    error = _refusal_within_bounds(_bomb(payload, crc, file_size=(1 << 20) - 1))
    assert isinstance(error, ComponentTooLarge)
    assert "bomb/assets/zeros.bin" in error.message


def test_bomb_with_an_inflated_compressed_size_hits_the_total_bound(
    gib_of_zeros: tuple[bytes, int],
) -> None:
    payload, crc = gib_of_zeros
    # A compressed size of 0xFFFFFFF0 hides the ratio; the declared total still gives it away.
    entries = [
        raw_entry("bomb/SKILL.md", SKILL_MD),
        RawEntry("bomb/assets/zeros.bin", payload, file_size=GIB, crc=crc),
    ]
    data = bytearray(raw_zip(entries))
    central = data.rfind(b"PK\x01\x02")
    data[central + 20 : central + 24] = (0xFFFFFFF0).to_bytes(4, "little")
    error = _refusal_within_bounds(bytes(data))
    assert isinstance(error, UnsafeArchive)
    assert "bomb/assets/zeros.bin" in error.message
