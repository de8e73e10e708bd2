"""The JSON Schema check of tool and script arguments: a schema is checked and compiled once."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from skills_app.domain.arguments import arguments_check
from skills_app.errors import ValidationFailed

SCHEMA = {
    "type": "object",
    "properties": {"slug": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["slug"],
    "additionalProperties": False,
}


def test_a_schema_is_checked_against_the_metaschema_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    original = Draft202012Validator.check_schema.__func__

    def counting(cls: type, schema: object, *args: object, **kwargs: object) -> None:
        calls.append(schema)
        original(cls, schema, *args, **kwargs)

    monkeypatch.setattr(Draft202012Validator, "check_schema", classmethod(counting))
    schema = {**SCHEMA, "title": "checked once"}  # a schema no other test has compiled
    for _ in range(5):
        arguments_check(schema, {"slug": "a"})
    with pytest.raises(ValidationFailed):
        arguments_check(dict(schema), {"slug": 1})  # an equal schema, another object
    assert len(calls) == 1


def test_the_answer_is_the_same_from_the_cache() -> None:
    for _ in range(2):
        with pytest.raises(ValidationFailed) as caught:
            arguments_check(SCHEMA, {"slug": "a", "extra": 1})
        assert caught.value.details == {"field": "extra"}
        arguments_check(SCHEMA, {"slug": "a", "limit": 3})


def test_a_broken_schema_is_refused_every_time() -> None:
    broken = {"type": "no-such-type"}
    for _ in range(2):
        with pytest.raises(ValidationFailed) as caught:
            arguments_check(broken, {}, schema_field="manifest.schema")
        assert caught.value.details == {"field": "manifest.schema"}
