"""The JSON log line (``skills_app/infra/jsonlog.py``, docs/contract.md §19) says what
python-json-logger's formatter said, key for key and in the same order, for a request line
and for an error with its traceback."""

from __future__ import annotations

import json
import logging
import sys

from pythonjsonlogger.json import JsonFormatter

from skills_app.infra.jsonlog import JsonLineFormatter

BEFORE = JsonFormatter(
    "%(levelname)s %(name)s %(message)s",
    rename_fields={"levelname": "level", "name": "logger"},
    timestamp=True,
)
REQUEST = {
    "request_id": "lb-7f3a.01",
    "workspace": "team",
    "token_id": None,
    "method": "GET",
    "route": "v1/recall",
    "status": 200,
    "duration_ms": 1.234,
}


def _record(name: str, level: int, msg: str, **kwargs: object) -> logging.LogRecord:
    return logging.getLogger(name).makeRecord(name, level, "f.py", 1, msg, (), **kwargs)  # type: ignore[arg-type]


def test_a_request_line_is_what_python_json_logger_wrote() -> None:
    record = _record("xmemo.request", logging.INFO, "request", exc_info=None, extra=REQUEST)
    line = JsonLineFormatter().format(record)
    assert "\n" not in line
    assert list(json.loads(line).items()) == list(json.loads(BEFORE.format(record)).items())


def test_an_error_keeps_its_traceback() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        record = _record("django.request", logging.ERROR, "failed", exc_info=sys.exc_info())
    ours = json.loads(JsonLineFormatter().format(record))
    record.exc_text = None
    theirs = json.loads(BEFORE.format(record))
    assert list(ours) == list(theirs)
    assert "ValueError: boom" in ours["exc_info"]
    assert ours["exc_info"] == theirs["exc_info"]
