"""What the request log line says about the request being served (docs/contract.md §19).

The middleware (``xmemo/observe.py``) opens a context per request; the token check
(``gateway.auth``) and the recall answer note who asked and in which workspace. The value kept
in the context variable is one mutable dict, so notes written in a copied context (a thread
an ASGI server runs the view in) reach the middleware that logs it.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

_current: ContextVar[dict[str, Any] | None] = ContextVar("xmemo_request", default=None)


def begin(request_id: str) -> dict[str, Any]:
    fields: dict[str, Any] = {"request_id": request_id, "workspace": None, "token_id": None}
    _current.set(fields)
    return fields


def end() -> None:
    _current.set(None)


def note(**fields: Any) -> None:
    current = _current.get()
    if current is not None:
        current.update(fields)


def request_id() -> str | None:
    current = _current.get()
    return None if current is None else current["request_id"]
