"""Logical path rules (docs/contract.md §3), uniqueness, and media types."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skills_app.domain.paths import (
    MAX_PATH_LENGTH,
    check_unique_paths,
    guess_media_type,
    is_text,
    validate_logical_path,
)
from skills_app.errors import InvalidPath

VALID_PATHS = [
    "a.md",
    "references/api.md",
    "scripts/run.sh",
    "a/b/c/d.txt",
    ".hidden",
    "a..b",
    "...",
    "sub/SKILL.md",
    "SKILL.md.bak",
    "with space.md",
    "한글/문서.md",
    "x" * MAX_PATH_LENGTH,
]

INVALID_PATHS = [
    ("", "non-empty"),
    ("/etc/passwd", "relative"),
    ("..", "'..'"),
    ("../x", "'..'"),
    ("a/../b", "'..'"),
    ("a/..", "'..'"),
    (".", "'.'"),
    ("./a", "'.'"),
    ("a/./b", "'.'"),
    ("a//b", "empty segment"),
    ("a/", "empty segment"),
    ("a\\b", "separator"),
    ("..\\x", "separator"),
    ("a\x00b", "control"),
    ("a\nb", "control"),
    ("a\tb", "control"),
    ("a\x7fb", "control"),
    ("a\x85b", "control"),
    ("SKILL.md", "reserved"),
    ("skill.MD", "reserved"),
    ("capsule.json", "reserved"),
    ("x" * (MAX_PATH_LENGTH + 1), "longer than 255"),
]


@pytest.mark.parametrize("path", VALID_PATHS)
def test_valid_paths_are_returned_unchanged(path: str) -> None:
    assert validate_logical_path(path) == path


@pytest.mark.parametrize(("path", "reason"), INVALID_PATHS)
def test_invalid_paths_raise_invalid_path_naming_the_path(path: str, reason: str) -> None:
    with pytest.raises(InvalidPath) as caught:
        validate_logical_path(path)
    assert caught.value.code == "INVALID_PATH"
    assert repr(path) in caught.value.message
    assert reason in caught.value.message
    assert caught.value.details["path"] == path


_SEGMENT = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp"),
        blacklist_characters="/\\",
        max_codepoint=0x2FFF,
    ),
    min_size=1,
    max_size=12,
).filter(lambda s: s not in (".", "..") and unicodedata.is_normalized("NFC", s))


@given(st.lists(_SEGMENT, min_size=2, max_size=6))
def test_any_relative_path_of_plain_segments_is_valid(segments: list[str]) -> None:
    path = "/".join(segments)
    assert validate_logical_path(path) == path


@given(st.lists(_SEGMENT, min_size=1, max_size=5), st.integers(min_value=0, max_value=5))
def test_a_dotdot_segment_anywhere_is_refused(segments: list[str], where: int) -> None:
    segments.insert(min(where, len(segments)), "..")
    with pytest.raises(InvalidPath):
        validate_logical_path("/".join(segments))


def test_distinct_paths_pass_uniqueness() -> None:
    check_unique_paths(["a.md", "b.md", "docs/a.md", "docs/b/c.md", "docsx/a.md"])


@pytest.mark.parametrize(
    ("paths", "conflicts_with"),
    [
        (["a.md", "a.md"], "a.md"),
        (["README.md", "readme.md"], "README.md"),
        (["Docs/x.md", "docs/X.md"], "Docs/x.md"),
        (["straße.md", "STRASSE.md"], "straße.md"),
        (["docs", "docs/x.md"], "docs"),
        (["docs/x.md/y.md", "docs/x.md"], "docs/x.md"),
        (["Docs", "docs/x.md"], "Docs"),
    ],
)
def test_duplicate_case_colliding_and_file_folder_paths_are_refused(
    paths: list[str], conflicts_with: str
) -> None:
    with pytest.raises(InvalidPath) as caught:
        check_unique_paths(paths)
    assert caught.value.details["conflicts_with"] == conflicts_with
    assert repr(caught.value.details["path"]) in caught.value.message


@pytest.mark.parametrize(
    ("path", "content", "expected"),
    [
        ("SKILL-notes.md", b"# hi", "text/markdown"),
        ("docs/README.MD", b"# hi", "text/markdown"),
        ("scripts/run.py", b"print(1)", "text/x-python"),
        ("scripts/run.sh", b"echo", "text/x-shellscript"),
        ("data/schema.json", b"{}", "application/json"),
        ("config.yaml", b"a: 1", "application/yaml"),
        ("assets/logo.png", b"\x89PNG\r\n", "image/png"),
        ("assets/page.html", b"<p>", "text/html"),
        ("notes.txt", b"\xff\xfe", "text/plain"),
        ("bundle.tar.gz", b"\x1f\x8b", "application/gzip"),
        ("Makefile", b"all:\n\techo", "text/plain"),
        ("blob", b"\x00\x01\x02", "application/octet-stream"),
        ("latin1", b"caf\xe9", "application/octet-stream"),
    ],
)
def test_guess_media_type(path: str, content: bytes, expected: str) -> None:
    assert guess_media_type(path, content) == expected


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", True),
        (b"plain", True),
        ("한글 é".encode(), True),
        (b"nul\x00inside", False),
        (b"\xff", False),
        (b"\xe2\x82", False),  # truncated multi-byte sequence
    ],
)
def test_is_text(content: bytes, expected: bool) -> None:
    assert is_text(content) is expected
