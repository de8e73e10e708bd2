"""Keyset (cursor) pagination for every list of the API: ``{"results": […], "next_cursor"}``.

A cursor holds the sort key of the last row served. It is encrypted and authenticated with a
key derived from SECRET_KEY, so it is opaque (sort keys can include internal ids, which never
leave the server in the clear) and cannot be forged; a damaged cursor is a VALIDATION_ERROR.
Keyset pagination stays correct while rows are added and costs the same on page 1 and 1,000.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from django.conf import settings
from django.db.models import Model, Q, QuerySet

from skills_app import errors
from skills_app.domain.shapes import PageOf

DEFAULT_LIMIT = 50
MAX_LIMIT = 100

M = TypeVar("M", bound=Model)
T = TypeVar("T")
# A row's shape in a page (a TypedDict of ``domain.shapes``).
S = TypeVar("S", bound=Mapping[str, object])


@dataclass(frozen=True)
class Page(Generic[S]):
    results: list[S]
    next_cursor: str | None

    def as_dict(self) -> PageOf[S]:
        return {"results": self.results, "next_cursor": self.next_cursor}


def _key() -> bytes:
    return hashlib.sha256(b"xmemo-cursor:" + settings.SECRET_KEY.encode("utf-8")).digest()


def _keystream(key: bytes, nonce: bytes, length: int) -> bytes:
    blocks = []
    for counter in range(length // 32 + 1):
        blocks.append(hashlib.sha256(key + nonce + counter.to_bytes(4, "big")).digest())
    return b"".join(blocks)[:length]


def encode_cursor(kind: str, values: Sequence[Any]) -> str:
    encoded: list[list[Any]] = []
    for value in values:
        if isinstance(value, datetime):
            encoded.append(["d", value.isoformat()])
        elif isinstance(value, int):
            encoded.append(["i", value])
        else:
            encoded.append(["s", str(value)])
    plain = json.dumps({"k": kind, "v": encoded}, separators=(",", ":")).encode("utf-8")
    key, nonce = _key(), secrets.token_bytes(8)
    body = bytes(a ^ b for a, b in zip(plain, _keystream(key, nonce, len(plain)), strict=True))
    tag = hmac.new(key, nonce + body, hashlib.sha256).digest()[:16]
    return base64.urlsafe_b64encode(nonce + body + tag).decode("ascii").rstrip("=")


def decode_cursor(kind: str, cursor: str) -> list[Any]:
    invalid = errors.ValidationFailed(
        "The cursor is not valid for this list; start again without it.",
        details={"field": "cursor"},
    )
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    except (ValueError, TypeError) as exc:
        raise invalid from exc
    if len(raw) < 8 + 16 + 1:
        raise invalid
    nonce, body, tag = raw[:8], raw[8:-16], raw[-16:]
    key = _key()
    if not hmac.compare_digest(tag, hmac.new(key, nonce + body, hashlib.sha256).digest()[:16]):
        raise invalid
    plain = bytes(a ^ b for a, b in zip(body, _keystream(key, nonce, len(body)), strict=True))
    try:
        payload = json.loads(plain)
        if payload["k"] != kind:
            raise invalid
        values: list[Any] = []
        for tag_name, value in payload["v"]:
            values.append(datetime.fromisoformat(value) if tag_name == "d" else value)
    except (ValueError, KeyError, TypeError) as exc:
        raise invalid from exc
    return values


def parse_limit(value: Any, *, default: int = DEFAULT_LIMIT) -> int:
    if value is None or value == "":
        return default
    try:
        limit = int(value)
    except (TypeError, ValueError):
        limit = 0
    if not 1 <= limit <= MAX_LIMIT:
        raise errors.ValidationFailed(
            f"limit must be a whole number from 1 to {MAX_LIMIT}.",
            details={"field": "limit", "limit": MAX_LIMIT},
        )
    return limit


@dataclass(frozen=True)
class Rows(Generic[T]):
    """One page of objects: what a list selector returns when the door shapes the answer."""

    results: list[T]
    next_cursor: str | None

    def page(self, serialize: Callable[[T], S]) -> Page[S]:
        return Page(results=[serialize(row) for row in self.results], next_cursor=self.next_cursor)


def paginate(
    queryset: QuerySet[M],
    *,
    kind: str,
    order: Sequence[tuple[str, bool]],
    cursor: str | None,
    limit: int,
    serialize: Callable[[M], S],
) -> Page[S]:
    """``paginate_rows``, each row shaped by ``serialize``."""
    return paginate_rows(queryset, kind=kind, order=order, cursor=cursor, limit=limit).page(
        serialize
    )


def paginate_rows(
    queryset: QuerySet[M],
    *,
    kind: str,
    order: Sequence[tuple[str, bool]],
    cursor: str | None,
    limit: int,
) -> Rows[M]:
    """One page of ``queryset`` sorted by ``order`` ((field, descending) pairs, unique together)."""
    fields = [field for field, _ in order]
    queryset = queryset.order_by(*[f"-{f}" if desc else f for f, desc in order])
    if cursor:
        values = decode_cursor(kind, cursor)
        if len(values) != len(order):
            raise errors.ValidationFailed(
                "The cursor is not valid for this list.", details={"field": "cursor"}
            )
        after = Q()
        for i, (field, desc) in enumerate(order):
            step = Q(**{f"{field}__{'lt' if desc else 'gt'}": values[i]})
            for j in range(i):
                step &= Q(**{fields[j]: values[j]})
            after |= step
        queryset = queryset.filter(after)
    rows = list(queryset[: limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = None
    if more and rows:
        last = rows[-1]
        next_cursor = encode_cursor(kind, [_attr(last, field) for field in fields])
    return Rows(results=rows, next_cursor=next_cursor)


def _attr(obj: Any, dotted: str) -> Any:
    for part in dotted.split("__"):
        obj = getattr(obj, part)
    return obj
