from __future__ import annotations

import pytest

from skills_app.errors import ValidationFailed
from skills_app.sandbox import ProtocolError, encode_args, parse_result


@pytest.mark.parametrize(
    ("stdout", "expected"),
    [
        (b'{"ok": true}', {"ok": True}),
        (b'\n  {"n": 1, "nested": {"a": [1, 2]}}\n\n', {"n": 1, "nested": {"a": [1, 2]}}),
        ('{"text": "한국어"}\n'.encode(), {"text": "한국어"}),
        (b"{}", {}),
    ],
)
def test_one_json_object_is_the_result(stdout: bytes, expected: dict[str, object]) -> None:
    assert parse_result(stdout) == expected


@pytest.mark.parametrize(
    ("stdout", "reason"),
    [
        (b"", "wrote nothing"),
        (b"  \n", "wrote nothing"),
        (b"hello", "not a single JSON value"),
        (b'progress: 50%\n{"ok": true}', "not a single JSON value"),
        (b'{"a": 1}{"b": 2}', "Extra data"),
        (b'{"a": 1}\n{"b": 2}\n', "Extra data"),
        (b"[1, 2]", "not an array"),
        (b'"done"', "not a string"),
        (b"42", "not a number"),
        (b"true", "not a boolean"),
        (b"null", "not null"),
        (b'{"x": NaN}', "NaN"),
        (b'{"x": -Infinity}', "-Infinity"),
        (b'{"x": "\xff"}', "not valid UTF-8"),
        (b'{"truncated": ', "not a single JSON value"),
    ],
)
def test_anything_but_one_json_object_is_a_protocol_error(stdout: bytes, reason: str) -> None:
    with pytest.raises(ProtocolError, match=reason):
        parse_result(stdout)


def test_args_are_encoded_as_compact_utf8_json() -> None:
    assert encode_args({"path": "/var/cache", "dry_run": True, "name": "é"}) == (
        '{"path":"/var/cache","dry_run":true,"name":"é"}'.encode()
    )


@pytest.mark.parametrize("args", [{"x": float("nan")}, {"x": object()}, ["not", "an", "object"]])
def test_args_that_are_not_a_json_object_are_refused(args: object) -> None:
    with pytest.raises(ValidationFailed):
        encode_args(args)  # type: ignore[arg-type]
