"""The subprocess wire protocol of a skill script (docs/contract.md §13, "Wire protocol").

stdin carries the JSON args object, stdout must carry exactly one JSON result object, stderr is
free-form log lines. These two functions are the only place that encodes or judges those bytes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NoReturn

from skills_app.errors import ValidationFailed

_JSON_TYPE_NAMES: dict[type, str] = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}


class ProtocolError(ValueError):
    """stdout of a script that exited 0 is not exactly one JSON object."""


def encode_args(args: Mapping[str, Any]) -> bytes:
    """The stdin bytes for ``args``: one strict JSON object (no NaN/Infinity), UTF-8."""
    if not isinstance(args, Mapping):
        raise ValidationFailed("Script args must be a JSON object.")
    try:
        text = json.dumps(dict(args), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise ValidationFailed(f"Script args are not valid JSON: {exc}.") from exc
    return text.encode("utf-8")


def _reject_constant(name: str) -> NoReturn:
    # NaN and Infinity are not JSON; accepting them would hand clients a result they cannot parse.
    raise ProtocolError(f"stdout contains {name}, which is not valid JSON")


def parse_result(stdout: bytes) -> dict[str, Any]:
    """The result object from a script's stdout; whitespace around it is allowed, nothing else."""
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"stdout is not valid UTF-8 (byte {exc.start})") from exc
    if not text.strip():
        raise ProtocolError("the script wrote nothing to stdout")
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ProtocolError(
            f"stdout is not a single JSON value: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from exc
    if not isinstance(value, dict):
        raise ProtocolError(f"stdout must be a JSON object, not {_JSON_TYPE_NAMES[type(value)]}")
    return value
