"""SKILL.md parsing, lossless serialisation and the frontmatter dialects of docs/contract.md §8."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skills_app.domain.skillmd import (
    DISPLAY_NAME_KEY,
    LEGACY_DISPLAY_NAME_KEY,
    METADATA_KEY,
    ParsedSkillMd,
    frontmatter_yaml,
    merge_frontmatter,
    parse_skill_md,
    serialize_skill_md,
    split_frontmatter,
    validate_frontmatter,
)
from skills_app.errors import ValidationFailed

# --- parsing ----------------------------------------------------------------------------------


def test_parse_frontmatter_and_body() -> None:
    parsed = parse_skill_md("---\nname: x\ndescription: Does x\nfoo: [1, 2]\n---\n# Body\n\ntext")
    assert parsed == ParsedSkillMd(
        frontmatter={"name": "x", "description": "Does x", "foo": [1, 2]}, body="# Body\n\ntext"
    )


def test_frontmatter_keeps_the_file_order() -> None:
    parsed = parse_skill_md("---\nz: 1\na: 2\nm: 3\n---\n")
    assert list(parsed.frontmatter) == ["z", "a", "m"]


def test_without_frontmatter_the_whole_text_is_body() -> None:
    text = "# Title\n---\nname: not frontmatter\n---\n"
    assert parse_skill_md(text) == ParsedSkillMd(frontmatter={}, body=text)


def test_body_is_byte_exact() -> None:
    body = "\n\n  leading blank lines\r\ntrailing spaces   \n---\nmore\n\n\n"
    assert parse_skill_md("---\na: 1\n---\n" + body).body == body


def test_crlf_delimiters() -> None:
    parsed = parse_skill_md(b"---\r\nname: x\r\nlist:\r\n  - a\r\n---\r\nbody\r\nline\r\n")
    assert parsed.frontmatter == {"name": "x", "list": ["a"]}
    assert parsed.body == "body\r\nline\r\n"


def test_bom_is_stripped() -> None:
    parsed = parse_skill_md("\ufeff---\nname: x\n---\nbody".encode())
    assert parsed.frontmatter == {"name": "x"}
    assert parsed.body == "body"


def test_delimiters_may_carry_trailing_blanks_and_end_the_file() -> None:
    assert parse_skill_md("--- \na: 1\n---\t") == ParsedSkillMd({"a": 1}, "")


def test_empty_frontmatter_block() -> None:
    assert parse_skill_md("---\n---\nbody") == ParsedSkillMd({}, "body")


def test_a_dashed_line_that_is_not_a_delimiter_is_not_frontmatter() -> None:
    assert parse_skill_md("---- rule\nx").frontmatter == {}
    assert parse_skill_md("--- x\n---\n").body == "--- x\n---\n"


def test_dates_and_times_stay_strings() -> None:
    parsed = parse_skill_md(
        "---\nday: 2024-01-01\nat: 2024-01-01T10:00:00Z\ntagged: !!timestamp 2001-12-14\n---\n"
    )
    assert parsed.frontmatter == {
        "day": "2024-01-01",
        "at": "2024-01-01T10:00:00Z",
        "tagged": "2001-12-14",
    }


def test_yaml_scalars_keep_their_yaml_types() -> None:
    parsed = parse_skill_md("---\ni: 3\nf: 1.5\nb: true\nn: null\ns: '3'\n---\n")
    assert parsed.frontmatter == {"i": 3, "f": 1.5, "b": True, "n": None, "s": "3"}


def test_invalid_utf8_names_the_path() -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_skill_md(b"---\nname: caf\xe9\n---\n", path="skills/x/SKILL.md")
    assert caught.value.code == "VALIDATION_ERROR"
    assert "skills/x/SKILL.md" in caught.value.message
    assert "UTF-8" in caught.value.message
    assert caught.value.details == {"path": "skills/x/SKILL.md", "offset": 13}


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("---\nname: x\nbad: [1, 2\nmore: 3\n---\n", 4),
        ("---\nname: x\n  - broken: indent\n---\n", 3),
        ("---\na: 1\na: 2\n---\n", 3),  # duplicate key would lose data
        ("---\nx: !!python/object:os.system ls\n---\n", 2),
        ("---\nx: *missing\n---\n", 2),
        ("---\na: &x [1, 2]\nb: *x\n---\n", 3),  # aliases could expand without bound
    ],
)
def test_malformed_yaml_names_path_and_line(text: str, line: int) -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_skill_md(text, path="x/SKILL.md")
    assert caught.value.details == {"path": "x/SKILL.md", "line": line}
    assert "x/SKILL.md" in caught.value.message
    assert f"line {line}" in caught.value.message


def test_unclosed_frontmatter_is_refused() -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_skill_md("---\nname: x\n# body without a closing line\n")
    assert "never closed" in caught.value.message


@pytest.mark.parametrize("yaml_text", ["- a\n- b\n", "just text\n", "42\n"])
def test_frontmatter_must_be_a_mapping(yaml_text: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_skill_md(f"---\n{yaml_text}---\nbody")
    assert "mapping" in caught.value.message


@pytest.mark.parametrize(
    ("yaml_text", "field"),
    [
        ("blob: !!binary aGVsbG8=\n", "blob"),
        ("s: !!set {a, b}\n", "s"),
        ("deep:\n  x: [1, !!binary aGVsbG8=]\n", "deep.x[1]"),
        ("n: .nan\n", "n"),
        ("on: push\n", "frontmatter"),
        ("meta:\n  1: one\n", "meta"),
    ],
)
def test_non_json_frontmatter_is_refused_naming_the_key(yaml_text: str, field: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_skill_md(f"---\n{yaml_text}---\n", path="SKILL.md")
    assert caught.value.details == {"field": field, "path": "SKILL.md"}


def test_unquoted_on_key_gets_a_hint() -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_skill_md("---\non: push\n---\n")
    assert "quote it" in caught.value.message
    assert "yes/no/on/off" in caught.value.message


def test_unknown_keys_are_kept_verbatim() -> None:
    text = "---\nname: x\nx-vendor:\n  nested: [1, {a: b}]\nWeird Key: ~\n---\n"
    fm = parse_skill_md(text).frontmatter
    assert fm == {"name": "x", "x-vendor": {"nested": [1, {"a": "b"}]}, "Weird Key": None}
    assert parse_skill_md(serialize_skill_md(fm, "")).frontmatter == fm


# --- serialisation and the round trip -----------------------------------------------------------


def test_serialize_shape() -> None:
    text = serialize_skill_md({"name": "x", "description": "d", "day": "2024-01-01"}, "# B\n")
    assert text == "---\nname: x\ndescription: d\nday: '2024-01-01'\n---\n# B\n"


def test_serialize_empty_frontmatter_still_writes_delimiters() -> None:
    assert serialize_skill_md({}, "---\nbody") == "---\n---\n---\nbody"
    assert parse_skill_md("---\n---\n---\nbody") == ParsedSkillMd({}, "---\nbody")


def test_multiline_strings_are_written_as_literal_blocks() -> None:
    text = frontmatter_yaml({"when_to_use": "line one\nline two\n"})
    assert text == "when_to_use: |\n  line one\n  line two\n"


def test_frontmatter_yaml_can_sort_keys() -> None:
    assert frontmatter_yaml({"b": 1, "a": 2}, sort_keys=True) == "a: 2\nb: 1\n"
    assert frontmatter_yaml({"b": 1, "a": 2}) == "b: 1\na: 2\n"


def test_serialize_refuses_non_json_frontmatter() -> None:
    with pytest.raises(ValidationFailed) as caught:
        serialize_skill_md({"when": {1, 2}}, "")
    assert caught.value.details["field"] == "when"


TRICKY_STRINGS = [
    "2024-01-01",
    "2024-01-01 10:00:00",
    "1.0",
    "1e3",
    "0x1F",
    "0o17",
    "017",
    "+1",
    "1_000",
    ".inf",
    "-.inf",
    ".nan",
    "yes",
    "No",
    "on",
    "OFF",
    "y",
    "null",
    "~",
    "",
    " ",
    "---",
    "...",
    "- a",
    "a: b",
    "#x",
    "'q'",
    '"',
    "@x",
    "`x`",
    "%x",
    "!tag",
    "&a",
    "*a",
    "? x",
    "<<",
    "=",
    "|",
    ">",
    "[a]",
    "{a: 1}",
    "a\n---\nb",
    "\n---\n",
    " lead\ntrail \n",
    "\ttab",
    "crlf\r\nline",
    "nel\x85line",
    "ls\u2028ps\u2029",
    "bom\ufeff",
    "\x07bell",
    "emoji 🎉",
    "非ASCII",
    "\ue000private",
    "\U0010fffd",
    "x" * 300,
]

# NUL cannot be stored (PostgreSQL JSON refuses it), so frontmatter text never holds it.
_STORABLE_TEXT = st.characters(codec="utf-8", exclude_characters="\x00")
_KEYS = st.one_of(
    st.sampled_from(
        ["name", "description", "license", "allowed-tools", "metadata", "x-custom", "on", "yes"]
    ),
    st.sampled_from(TRICKY_STRINGS),
    st.text(_STORABLE_TEXT, max_size=20),
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(TRICKY_STRINGS),
    st.text(_STORABLE_TEXT),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(_KEYS, children, max_size=4)
    ),
    max_leaves=12,
)
_FRONTMATTER = st.dictionaries(_KEYS, _VALUES, max_size=8)
_BODY = st.one_of(
    st.text(),
    st.lists(
        st.one_of(
            st.sampled_from(
                ["---", "---\n", "---\r\n", "\r\n", "\n", "\r", " ", "...", "\ufeff", "é", "--- x"]
            ),
            st.text(max_size=10),
        ),
        max_size=12,
    ).map("".join),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_FRONTMATTER, _BODY)
def test_parse_serialize_round_trip(frontmatter: dict[str, Any], body: str) -> None:
    text = serialize_skill_md(frontmatter, body)
    parsed = parse_skill_md(text)
    assert parsed.frontmatter == frontmatter
    assert list(parsed.frontmatter) == list(frontmatter)
    assert parsed.body == body
    # the file is stable: writing the parsed result again gives the same bytes
    assert serialize_skill_md(parsed.frontmatter, parsed.body) == text
    assert parse_skill_md(text.encode("utf-8")) == parsed


@pytest.mark.parametrize("value", TRICKY_STRINGS)
def test_tricky_strings_round_trip_as_strings(value: str) -> None:
    fm = {"k": value, value: [value]}
    assert parse_skill_md(serialize_skill_md(fm, "")).frontmatter == fm


def test_floats_and_big_ints_round_trip_exactly() -> None:
    fm = {"values": [0.1, -0.0, 5e-324, 1e16, 1.7976931348623157e308, 2**70, -(2**70)]}
    parsed = parse_skill_md(serialize_skill_md(fm, "")).frontmatter
    assert parsed == fm
    assert [type(v) for v in parsed["values"]] == [type(v) for v in fm["values"]]


def test_repeated_objects_are_written_without_yaml_aliases() -> None:
    shared = {"a": [1, 2]}
    text = frontmatter_yaml({"x": shared, "y": shared})
    assert "&" not in text
    assert "*" not in text


# --- name/description split -------------------------------------------------------------------


def test_split_frontmatter() -> None:
    name, description, rest = split_frontmatter(
        {"license": "MIT", "name": "x", "description": "d", "tools": []}
    )
    assert (name, description, rest) == ("x", "d", {"license": "MIT", "tools": []})
    assert list(rest) == ["license", "tools"]


def test_split_frontmatter_coerces_scalars_and_defaults_to_empty() -> None:
    assert split_frontmatter({"name": 2024, "description": None}) == ("2024", "", {})
    assert split_frontmatter({}) == ("", "", {})


@pytest.mark.parametrize("key", ["name", "description"])
def test_split_frontmatter_refuses_structured_name_or_description(key: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        split_frontmatter({key: ["a"]})
    assert caught.value.details == {"field": key}


def test_merge_frontmatter_puts_name_and_description_first() -> None:
    merged = merge_frontmatter("x", "d", {"license": "MIT", "name": "ignored"})
    assert merged == {"name": "x", "description": "d", "license": "MIT"}
    assert list(merged) == ["name", "description", "license"]


def _without_identity(frontmatter: dict[str, Any]) -> dict[str, Any]:
    """``frontmatter`` with no key that names or describes the skill (a display name, in
    ``metadata`` or at the top level, is the name)."""
    identity = ("name", "description", LEGACY_DISPLAY_NAME_KEY)
    kept = {k: v for k, v in frontmatter.items() if k not in identity}
    if isinstance(kept.get(METADATA_KEY), dict):
        kept[METADATA_KEY] = {k: v for k, v in kept[METADATA_KEY].items() if k != DISPLAY_NAME_KEY}
    return kept


@given(_FRONTMATTER)
def test_split_then_merge_keeps_every_other_key(frontmatter: dict[str, Any]) -> None:
    kept = _without_identity(frontmatter)
    name, description, rest = split_frontmatter(kept)
    assert (name, description) == ("", "")
    assert merge_frontmatter(name, description, rest) == {"name": "", "description": "", **kept}


def test_split_then_merge_on_the_display_name_keys_hypothesis_found() -> None:
    """The two cases hypothesis drew from the module's own constants: a display name is the
    name, never kept among the other keys."""
    for display in ({LEGACY_DISPLAY_NAME_KEY: False}, {METADATA_KEY: {DISPLAY_NAME_KEY: "D"}}):
        name, _, rest = split_frontmatter(display)
        assert name == ("False" if LEGACY_DISPLAY_NAME_KEY in display else "D")
        assert rest == {}
    with pytest.raises(ValidationFailed):
        split_frontmatter({LEGACY_DISPLAY_NAME_KEY: []})


# --- dialects ---------------------------------------------------------------------------------

VALID_DIALECT_FRONTMATTER: list[dict[str, Any]] = [
    # Agent Skills
    {
        "license": "Apache-2.0",
        "compatibility": "x" * 500,
        "allowed-tools": "Bash(git:*) Read",
        "metadata": {"author": "me", "version": "1"},
    },
    # rich native
    {
        "when_to_use": "When the user asks for metrics.",
        "activation": {"mode": "always"},
        "metadata": {"os": ["linux", "darwin"], "requires": {"bins": [], "config": []}},
        "tools": [{"name": "q", "impl": "builtin:prom.Query", "class": "read"}, "Read"],
    },
    {"activation": "always", "metadata": {"os": "linux", "requires": ["jq"]}},
    # command form
    {
        "allowed-tools": ["Bash(git add:*)", "Read"],
        "invoke": {"user": True, "model": False},
        "max-iterations": 50,
        "argument-names": ["file", "mode_2", "_x"],
    },
    {"invoke": {}, "max-iterations": 1, "argument-names": []},
    # skill.json manifest fields
    {
        "entry": "run.sh",
        "env_allow": ["PATH", "HOME"],
        "timeout_seconds": 0,
        "class": "mutating",
        "category": "ops",
        "schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
    # unknown keys of any JSON type
    {"x-anything": {"deep": [1, 2.5, None, True]}, "other": "v"},
]


@pytest.mark.parametrize("frontmatter", VALID_DIALECT_FRONTMATTER)
def test_valid_dialect_frontmatter_passes(frontmatter: dict[str, Any]) -> None:
    validate_frontmatter(frontmatter)  # raises on any refusal


INVALID_DIALECT_FRONTMATTER: list[tuple[str, dict[str, Any]]] = [
    ("license", {"license": ["MIT"]}),
    ("compatibility", {"compatibility": "x" * 501}),
    ("compatibility", {"compatibility": 3}),
    ("allowed-tools", {"allowed-tools": ["Read", 3]}),
    ("allowed-tools", {"allowed-tools": {"Read": True}}),
    ("metadata", {"metadata": "v1"}),
    ("metadata.os", {"metadata": {"os": {"linux": True}}}),
    ("metadata.requires", {"metadata": {"requires": "jq"}}),
    ("when_to_use", {"when_to_use": ["a"]}),
    ("activation", {"activation": 1}),
    ("tools", {"tools": "Read, Grep"}),
    ("tools", {"tools": [1]}),
    ("invoke", {"invoke": True}),
    ("invoke.user", {"invoke": {"user": "yes"}}),
    ("invoke.model", {"invoke": {"model": 0}}),
    ("max-iterations", {"max-iterations": 0}),
    ("max-iterations", {"max-iterations": -3}),
    ("max-iterations", {"max-iterations": True}),
    ("max-iterations", {"max-iterations": 2.0}),
    ("max-iterations", {"max-iterations": "50"}),
    ("argument-names", {"argument-names": "file"}),
    ("argument-names", {"argument-names": ["1st"]}),
    ("argument-names", {"argument-names": ["has-dash"]}),
    ("argument-names", {"argument-names": ["a", "a"]}),
    ("argument-names", {"argument-names": ["ARGUMENTS"]}),
    ("argument-names", {"argument-names": ["ARG_COUNT"]}),
    ("entry", {"entry": ["run.sh"]}),
    ("env_allow", {"env_allow": "PATH"}),
    ("timeout_seconds", {"timeout_seconds": -1}),
    ("timeout_seconds", {"timeout_seconds": False}),
    ("timeout_seconds", {"timeout_seconds": 1.5}),
    ("class", {"class": "harmless"}),
    ("class", {"class": ["safe"]}),
    ("category", {"category": 1}),
    ("schema", {"schema": "object"}),
]


@pytest.mark.parametrize(("field", "frontmatter"), INVALID_DIALECT_FRONTMATTER)
def test_known_key_with_wrong_type_names_the_key(field: str, frontmatter: dict[str, Any]) -> None:
    with pytest.raises(ValidationFailed) as caught:
        validate_frontmatter(frontmatter)
    assert caught.value.code == "VALIDATION_ERROR"
    assert caught.value.details == {"field": field}
    assert repr(field) in caught.value.message


@pytest.mark.parametrize(
    ("frontmatter", "field"),
    [
        ({"x": float("inf")}, "x"),
        ({"x": {"y": b"bytes"}}, "x.y"),
        ({"x": ("a", "b")}, "x"),
        ({"x": "\ud800"}, "x"),
        ({1: "int key"}, "frontmatter"),
    ],
)
def test_validate_frontmatter_refuses_what_json_cannot_hold(
    frontmatter: dict[Any, Any], field: str
) -> None:
    with pytest.raises(ValidationFailed) as caught:
        validate_frontmatter(frontmatter)
    assert caught.value.details == {"field": field}


def test_validate_frontmatter_needs_a_mapping() -> None:
    with pytest.raises(ValidationFailed) as caught:
        validate_frontmatter(["a"])  # type: ignore[arg-type]
    assert caught.value.details == {"field": "frontmatter"}


def test_absurd_nesting_is_a_validation_error_not_a_crash() -> None:
    depth = 20_000
    with pytest.raises(ValidationFailed) as caught:
        parse_skill_md("---\nx: " + "[" * depth + "]" * depth + "\n---\n")
    assert caught.value.details["path"] == "SKILL.md"


@pytest.mark.parametrize(
    "text", ["1e3", "0o17", "+12", ".5", "1.", "-.inf", ".NaN", "~", "Null", "TRUE", "0x1F"]
)
def test_text_a_yaml_1_2_reader_would_take_for_a_number_is_quoted(text: str) -> None:
    """YAML 1.2 readers (the conformance suite's, most JavaScript hosts') take plain ``1e3`` and
    ``0o17`` for numbers, which YAML 1.1 (PyYAML) reads as text: the writer quotes them, so every
    reader gets back the text (docs/contract.md §20)."""
    written = serialize_skill_md({"name": "x", "value": text, text: "key"}, "")
    assert f"value: '{text}'\n" in written
    assert f"'{text}': key\n" in written
    assert parse_skill_md(written).frontmatter == {"name": "x", "value": text, text: "key"}
    assert "version: 1.0\n" in serialize_skill_md({"version": 1.0}, "")  # a float stays one
