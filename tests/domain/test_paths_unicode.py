"""Paths are stored NFC; case or normalization twins, invisible and bidi characters are refused
(docs/contract.md §3), and media types are a plain ``type/subtype``."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from skills_app.domain.bundle import ComponentData, SkillBundle
from skills_app.domain.limits import validate_bundle
from skills_app.domain.paths import check_unique_paths, validate_logical_path, validate_media_type
from skills_app.errors import InvalidPath, ValidationFailed

NFC = unicodedata.normalize("NFC", "references/café.md")
NFD = unicodedata.normalize("NFD", "references/café.md")


def _bundle(*paths: str) -> SkillBundle:
    return SkillBundle(
        name="n",
        description="d",
        instruction_body="b",
        components=tuple(ComponentData(p, "reference", b"x", "text/markdown") for p in paths),
    )


def test_nfc_and_nfd_spellings_of_one_path_cannot_coexist() -> None:
    assert NFC != NFD
    with pytest.raises(InvalidPath):
        validate_bundle(_bundle(NFC, NFD))


def test_a_path_is_stored_nfc() -> None:
    assert ComponentData(NFD, "reference", b"x").logical_path == NFC
    validate_bundle(_bundle(NFD))


@pytest.mark.parametrize(
    "char",
    ["\u202e", "\u202a", "\u2066", "\u2069", "\u200b", "\u200c", "\u200d", "\ufeff", "\u2028"],
)
def test_bidi_override_and_zero_width_characters_are_refused(char: str) -> None:
    with pytest.raises(InvalidPath):
        validate_logical_path(f"scripts/run{char}.sh")


def test_a_lone_surrogate_in_a_path_is_refused() -> None:
    with pytest.raises(InvalidPath):
        validate_logical_path("a\ud800.md")


def _caseless(text: str) -> str:
    """Unicode's canonical caseless form (D145): what a case-insensitive file system equates."""
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", text).casefold())


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="/\\"), min_size=1))
@example("\u0131")  # dotless i: its upper case folds to a different letter
def test_normalization_and_case_twins_always_collide(name: str) -> None:
    path = f"docs/{name}.md"
    variants = (path, path.upper(), path.lower())
    twins = {unicodedata.normalize("NFC", v) for v in variants} | {
        unicodedata.normalize("NFD", v) for v in variants
    }
    twins.discard(path)
    for twin in twins:
        if _caseless(twin) != _caseless(path):
            continue  # e.g. dotless i: upper() gives "I", whose case folding is "i": not a twin
        with pytest.raises(InvalidPath):
            check_unique_paths([path, twin])


@given(st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=40))
def test_accepted_paths_are_nfc_and_visible(path: str) -> None:
    stored = ComponentData(path, "reference", b"").logical_path
    try:
        validate_logical_path(stored)
    except InvalidPath:
        return
    assert unicodedata.is_normalized("NFC", stored)
    assert not any(unicodedata.category(ch) in {"Cc", "Cf", "Cs"} for ch in stored)


@pytest.mark.parametrize(
    "media_type",
    ["text/markdown", "application/vnd.api+json", "text/plain; charset=utf-8", 'a/b; x="y z"'],
)
def test_plain_media_types_pass(media_type: str) -> None:
    assert validate_media_type(media_type, path="a") == media_type


@pytest.mark.parametrize(
    "media_type",
    ["text/plain\r\nX: 1", "text/plain\n", "text", "/plain", "text/" + "p" * 127, "tëxt/plain", ""],
)
def test_broken_media_types_are_refused(media_type: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        validate_media_type(media_type, path="a")
    assert refused.value.details["field"] == "media_type"
