"""docs/contract.md §3 limits: each boundary passes exactly at the limit and fails one unit over."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skills_app.domain.bundle import COMPONENT_TYPES, ComponentData, SkillBundle
from skills_app.domain.limits import (
    DESCRIPTION_MAX,
    MAX_BODY_BYTES,
    MAX_COMPONENT_BYTES,
    MAX_COMPONENTS,
    MAX_FRONTMATTER_BYTES,
    MAX_PATH_LENGTH,
    NAME_MAX,
    SLUG_MAX,
    slug_from_name,
    validate_bundle,
    validate_slug,
)
from skills_app.errors import (
    BodyTooLarge,
    ComponentTooLarge,
    InvalidPath,
    TooManyComponents,
    ValidationFailed,
    XmemoError,
)


def test_limits_are_the_spec_values() -> None:
    assert (MAX_BODY_BYTES, MAX_COMPONENTS, MAX_COMPONENT_BYTES) == (65536, 50, 131072)
    assert (MAX_PATH_LENGTH, NAME_MAX, DESCRIPTION_MAX, SLUG_MAX) == (255, 200, 1024, 64)


def bundle(**changes: Any) -> SkillBundle:
    base = SkillBundle(
        name="Incident triage",
        description="Triage an incident.",
        instruction_body="# Steps\n",
        frontmatter={"license": "MIT"},
        components=(ComponentData("references/a.md", "reference", b"a"),),
        slug="incident-triage",
    )
    return dataclasses.replace(base, **changes)


def components(count: int) -> tuple[ComponentData, ...]:
    return tuple(ComponentData(f"c{i}.md", "document", b"x") for i in range(count))


def refused(candidate: SkillBundle) -> XmemoError:
    with pytest.raises(XmemoError) as caught:
        validate_bundle(candidate)
    return caught.value


# --- slug -----------------------------------------------------------------------------------


@pytest.mark.parametrize("slug", ["a", "a-b", "abc-123", "9", "a-b-c-d", "x" * SLUG_MAX])
def test_valid_slugs(slug: str) -> None:
    assert validate_slug(slug) == slug


@pytest.mark.parametrize(
    "slug",
    ["", "-a", "a-", "a--b", "A", "a_b", "a b", "a.b", "é", "a\n", "x" * (SLUG_MAX + 1)],
)
def test_invalid_slugs(slug: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        validate_slug(slug)
    assert caught.value.details["field"] == "slug"
    assert caught.value.code == "VALIDATION_ERROR"


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("Incident Triage", "incident-triage"),
        ("  Café -- Review!  ", "cafe-review"),
        ("disk_cleaner", "disk-cleaner"),
        ("v2.0 Release", "v2-0-release"),
        ("한글 이름", "skill"),
        ("", "skill"),
        ("---", "skill"),
        ("a" * 63 + "-b", "a" * 63),
    ],
)
def test_slug_from_name(name: str, slug: str) -> None:
    assert slug_from_name(name) == slug


@given(st.text())
def test_slug_from_name_always_gives_a_valid_slug(name: str) -> None:
    assert validate_slug(slug_from_name(name))


# --- name, description, body ----------------------------------------------------------------


def test_a_valid_bundle_passes() -> None:
    validate_bundle(bundle())  # raises on any refusal


@pytest.mark.parametrize(("field", "limit"), [("name", NAME_MAX), ("description", DESCRIPTION_MAX)])
def test_text_fields_at_and_over_their_limit(field: str, limit: int) -> None:
    validate_bundle(bundle(**{field: "é" * limit}))
    error = refused(bundle(**{field: "é" * (limit + 1)}))
    assert isinstance(error, ValidationFailed)
    assert error.details == {"field": field, "limit": limit}


@pytest.mark.parametrize("field", ["name", "description"])
@pytest.mark.parametrize("value", ["", "   ", "\n\t"])
def test_text_fields_must_not_be_blank(field: str, value: str) -> None:
    error = refused(bundle(**{field: value}))
    assert isinstance(error, ValidationFailed)
    assert error.details["field"] == field


def test_body_exactly_at_the_limit_passes() -> None:
    validate_bundle(bundle(instruction_body="x" * MAX_BODY_BYTES))
    validate_bundle(bundle(instruction_body="é" * (MAX_BODY_BYTES // 2)))


def test_body_one_byte_over_fails_with_body_too_large() -> None:
    error = refused(bundle(instruction_body="x" * (MAX_BODY_BYTES + 1)))
    assert isinstance(error, BodyTooLarge)
    assert error.code == "BODY_TOO_LARGE"
    assert error.details == {"limit": 65536, "size": 65537}
    assert "65,536" in error.message


def test_body_limit_counts_utf8_bytes_not_characters() -> None:
    body = "x" * (MAX_BODY_BYTES - 1) + "é"  # 65,536 characters, 65,537 bytes
    error = refused(bundle(instruction_body=body))
    assert isinstance(error, BodyTooLarge)
    assert error.details["size"] == MAX_BODY_BYTES + 1


def test_text_that_cannot_be_utf8_is_a_validation_error_not_a_crash() -> None:
    error = refused(bundle(instruction_body="lone \ud800 surrogate"))
    assert isinstance(error, ValidationFailed)
    assert error.details["field"] == "instruction_body"


# --- slug and frontmatter inside the bundle --------------------------------------------------


def test_bundle_slug_is_checked_when_given() -> None:
    validate_bundle(bundle(slug=None))
    error = refused(bundle(slug="Bad Slug"))
    assert error.details["field"] == "slug"


@pytest.mark.parametrize("key", ["name", "description"])
def test_frontmatter_may_not_repeat_name_or_description(key: str) -> None:
    error = refused(bundle(frontmatter={key: "x"}))
    assert isinstance(error, ValidationFailed)
    assert error.details["field"] == f"frontmatter.{key}"


def test_frontmatter_dialect_errors_surface_through_validate_bundle() -> None:
    error = refused(bundle(frontmatter={"max-iterations": 0}))
    assert isinstance(error, ValidationFailed)
    assert error.details["field"] == "max-iterations"


def test_frontmatter_size_at_and_over_its_limit() -> None:
    overhead = len('{"k":""}')
    validate_bundle(bundle(frontmatter={"k": "x" * (MAX_FRONTMATTER_BYTES - overhead)}))
    error = refused(bundle(frontmatter={"k": "x" * (MAX_FRONTMATTER_BYTES - overhead + 1)}))
    assert isinstance(error, ValidationFailed)
    assert error.details == {
        "field": "frontmatter",
        "limit": MAX_FRONTMATTER_BYTES,
        "size": MAX_FRONTMATTER_BYTES + 1,
    }


# --- components -----------------------------------------------------------------------------


def test_components_none_means_carried_over_and_skips_component_checks() -> None:
    validate_bundle(bundle(components=None))  # raises if it touched the missing components


def test_exactly_max_components_pass() -> None:
    validate_bundle(bundle(components=components(MAX_COMPONENTS)))


def test_one_component_too_many_fails() -> None:
    error = refused(bundle(components=components(MAX_COMPONENTS + 1)))
    assert isinstance(error, TooManyComponents)
    assert error.code == "TOO_MANY_COMPONENTS"
    assert error.details == {"limit": 50, "count": 51}


def test_component_exactly_at_the_size_limit_passes() -> None:
    big = ComponentData("assets/big.bin", "artifact", b"\0" * MAX_COMPONENT_BYTES)
    validate_bundle(bundle(components=(big,)))


def test_component_one_byte_over_fails_naming_the_path() -> None:
    big = ComponentData("assets/big.bin", "artifact", b"\0" * (MAX_COMPONENT_BYTES + 1))
    error = refused(bundle(components=(big,)))
    assert isinstance(error, ComponentTooLarge)
    assert error.code == "COMPONENT_TOO_LARGE"
    assert "assets/big.bin" in error.message
    assert error.details == {"path": "assets/big.bin", "limit": 131072, "size": 131073}


def test_component_path_length_boundary() -> None:
    at_limit = "d/" + "x" * (MAX_PATH_LENGTH - 2)
    validate_bundle(bundle(components=(ComponentData(at_limit, "document", b""),)))
    error = refused(bundle(components=(ComponentData(at_limit + "x", "document", b""),)))
    assert isinstance(error, InvalidPath)


@pytest.mark.parametrize("type_", COMPONENT_TYPES)
def test_every_component_type_is_accepted(type_: str) -> None:
    validate_bundle(bundle(components=(ComponentData("f.txt", type_, b"x"),)))


def test_unknown_component_type_is_refused() -> None:
    error = refused(bundle(components=(ComponentData("f.txt", "binary", b"x"),)))
    assert isinstance(error, ValidationFailed)
    assert error.details["field"] == "type"
    assert error.details["path"] == "f.txt"


@pytest.mark.parametrize(
    "paths",
    [["a.md", "a.md"], ["A.md", "a.md"], ["../a.md"], ["SKILL.md"], ["docs", "docs/a.md"]],
)
def test_bad_component_paths_are_refused(paths: list[str]) -> None:
    parts = tuple(ComponentData(path, "document", b"x") for path in paths)
    error = refused(bundle(components=parts))
    assert isinstance(error, InvalidPath)
    assert error.code == "INVALID_PATH"
