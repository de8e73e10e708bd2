"""What the request log line says about the request being served (docs/contract.md §19).

Each HTTP door opens a context per request (Django's middleware, the MCP mount); the token
check and the recall answer note who asked and in which workspace, in one mutable dict so that
notes from a copied context (an ASGI view's thread) reach the door that logs. The request id is
a sane ``X-Request-ID`` (1 to 64 of letters, digits and ``._:-``) or a new one, sent back and
handed to the jobs the request enqueues. No header, secret or body is logged."""

from __future__ import annotations

import logging
import re
import uuid
from contextvars import ContextVar
from typing import Any

from skills_app.infra.metrics import REQUESTS

HEADER = "X-Request-ID"
_SANE = re.compile(r"[A-Za-z0-9._:-]{1,64}")
logger = logging.getLogger("xmemo.request")
# Methods as metric labels: any other a client invents counts as "other" (bounded labels).
METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"))

_current: ContextVar[dict[str, Any] | None] = ContextVar("xmemo_request", default=None)
# What a layer works out once per request and reuses within it (never logged).
_memo: ContextVar[dict[str, Any] | None] = ContextVar("xmemo_request_memo", default=None)


def request_id_from(given: str) -> str:
    """The request's id: ``given`` (the ``X-Request-ID`` header's value) when sane, else new."""
    return given if _SANE.fullmatch(given) else uuid.uuid4().hex


def finished(
    fields: dict[str, Any], *, method: str, route: str, status: int, seconds: float
) -> None:
    """One request answered: its observation in ``metrics.REQUESTS`` and its JSON line.
    ``route`` is bounded (a URL pattern, never the path a client sent)."""
    label = method if method in METHODS else "other"
    REQUESTS.labels(route, label, str(status)).observe(seconds)
    logger.info(
        "request",
        extra={
            **fields,
            "method": method,
            "route": route,
            "status": status,
            "duration_ms": round(seconds * 1000, 3),
        },
    )


def begin(request_id: str) -> dict[str, Any]:
    fields: dict[str, Any] = {"request_id": request_id, "workspace": None, "token_id": None}
    _current.set(fields)
    _memo.set({})
    return fields


def end() -> None:
    _current.set(None)
    _memo.set(None)


def memo() -> dict[str, Any] | None:
    """This request's own scratch values (None outside a request): not part of its log line."""
    return _memo.get()


def note(**fields: Any) -> None:
    current = _current.get()
    if current is not None:
        current.update(fields)


def request_id() -> str | None:
    current = _current.get()
    return None if current is None else current["request_id"]
