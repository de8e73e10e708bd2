"""canonical_hash is exactly the docs/contract.md §3 definition and sensitive to every byte."""

from __future__ import annotations

import hashlib
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from skills_app.domain.canonical import canonical_document, canonical_hash, sha256_hex

A_SHA = hashlib.sha256(b"alpha").hexdigest()
B_SHA = hashlib.sha256(b"beta").hexdigest()

CASE: dict[str, Any] = {
    "name": "Café triage",
    "description": "Triage — fast",
    "frontmatter": {"metadata": {"os": ["linux"], "b": 1}, "license": "MIT"},
    "instruction_body": "# Steps\n1. Look\r\n",
    "components": [("z/b.md", "reference", B_SHA), ("a.md", "example", A_SHA)],
}

# Written by hand from docs/contract.md §3: sorted keys at every level, no spaces, non-ASCII as is,
# components sorted by path.
EXPECTED_JSON = (
    '{"components":['
    f'{{"path":"a.md","sha256":"{A_SHA}","type":"example"}},'
    f'{{"path":"z/b.md","sha256":"{B_SHA}","type":"reference"}}'
    "],"
    '"description":"Triage — fast",'
    '"frontmatter":{"license":"MIT","metadata":{"b":1,"os":["linux"]}},'
    '"instruction_body":"# Steps\\n1. Look\\r\\n",'
    '"name":"Café triage",'
    '"v":1}'
)


def test_sha256_hex() -> None:
    assert sha256_hex(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_document_matches_the_hand_written_spec_json() -> None:
    assert canonical_document(**CASE) == EXPECTED_JSON.encode("utf-8")


def test_hash_is_sha256_of_the_hand_written_json() -> None:
    expected = hashlib.sha256(EXPECTED_JSON.encode("utf-8")).hexdigest()
    assert canonical_hash(**CASE) == expected
    assert len(expected) == 64


def test_non_ascii_is_kept_as_utf8_not_escaped() -> None:
    document = canonical_document(**CASE)
    assert "Café".encode() in document
    assert b"\\u00e9" not in document


def test_no_components_is_an_empty_list() -> None:
    document = canonical_document(
        name="n", description="d", frontmatter={}, instruction_body="", components=[]
    )
    assert document == (
        b'{"components":[],"description":"d","frontmatter":{},'
        b'"instruction_body":"","name":"n","v":1}'
    )


_COMPONENT = st.tuples(
    st.text(min_size=1, max_size=20),
    st.sampled_from(["reference", "example", "script"]),
    st.binary(max_size=20).map(sha256_hex),
)


@given(st.lists(_COMPONENT, max_size=8, unique_by=lambda c: c[0]), st.randoms())
def test_hash_is_independent_of_component_order(components: list, random: Any) -> None:
    shuffled = list(components)
    random.shuffle(shuffled)
    base = {**CASE, "components": components}
    assert canonical_hash(**base) == canonical_hash(**{**base, "components": shuffled})


@given(st.sampled_from(["name", "description", "instruction_body"]), st.data())
def test_any_change_to_a_text_field_changes_the_hash(field: str, data: st.DataObject) -> None:
    original = CASE[field]
    index = data.draw(st.integers(min_value=0, max_value=len(original)))
    inserted = data.draw(st.text(min_size=1, max_size=3))
    changed = original[:index] + inserted + original[index:]
    assert canonical_hash(**CASE) != canonical_hash(**{**CASE, field: changed})


@given(st.binary(max_size=64), st.data())
def test_any_byte_of_a_component_changes_the_hash(content: bytes, data: st.DataObject) -> None:
    position = data.draw(st.integers(min_value=0, max_value=len(content)))
    flipped = bytearray(content)
    if position < len(content):
        flipped[position] ^= 1 << data.draw(st.integers(min_value=0, max_value=7))
    else:
        flipped.append(0)

    def with_content(raw: bytes) -> str:
        return canonical_hash(**{**CASE, "components": [("c.bin", "artifact", sha256_hex(raw))]})

    assert with_content(content) != with_content(bytes(flipped))


def test_component_type_and_path_are_part_of_the_hash() -> None:
    base = canonical_hash(**CASE)
    retyped = [("z/b.md", "document", B_SHA), ("a.md", "example", A_SHA)]
    moved = [("z/B.md", "reference", B_SHA), ("a.md", "example", A_SHA)]
    assert canonical_hash(**{**CASE, "components": retyped}) != base
    assert canonical_hash(**{**CASE, "components": moved}) != base


@given(
    st.dictionaries(
        st.text(max_size=5), st.one_of(st.integers(), st.text(max_size=5), st.booleans())
    ),
    st.text(min_size=1, max_size=5),
)
def test_frontmatter_changes_change_the_hash(frontmatter: dict, key: str) -> None:
    changed = dict(frontmatter)
    changed[key] = [changed.get(key)]  # a different value under ``key``, whether new or not
    assert canonical_hash(**{**CASE, "frontmatter": frontmatter}) != canonical_hash(
        **{**CASE, "frontmatter": changed}
    )


def test_frontmatter_key_order_does_not_matter() -> None:
    forward = {"a": 1, "b": {"x": 1, "y": 2}}
    backward = {"b": {"y": 2, "x": 1}, "a": 1}
    assert canonical_hash(**{**CASE, "frontmatter": forward}) == canonical_hash(
        **{**CASE, "frontmatter": backward}
    )
