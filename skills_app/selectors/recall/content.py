"""A revision's immutable content and components, cached by revision id (``infra.cache``)."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from dataclasses import astuple, dataclass
from typing import Any

from skills_app.domain.json_bytes import encode_json
from skills_app.domain.paths import is_text
from skills_app.infra.cache import cached_immutable
from skills_app.models import SkillComponent, SkillRevision


def _path_key(path: str) -> str:
    return hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True)
class RootContent:
    revision_number: int
    name: str
    description: str
    canonical_hash: str
    frontmatter_json: str  # kept as text so no caller can mutate the cached value
    instruction_body: str
    resources: tuple[tuple[str, str, str, int, str], ...]
    approx_tokens: int  # stored with the revision (domain.context_cost)


@dataclass(frozen=True)
class ComponentContent:
    logical_path: str
    type: str
    content_hash: str
    size: int
    media_type: str
    encoding: str
    content: str
    raw: bytes


# A revision's columns RootContent is made of (``root_from_row``), and a component's.
ROOT_COLUMNS = (
    "revision_number",
    "name",
    "description",
    "canonical_hash",
    "frontmatter",
    "instruction_body",
    "approx_tokens",
)
RESOURCE_COLUMNS = ("logical_path", "type", "content_hash", "size", "media_type")


def root_from_row(
    row: tuple[Any, ...], resources: tuple[tuple[str, str, str, int, str], ...]
) -> RootContent:
    number, name, description, canonical, frontmatter, body, tokens = row
    return RootContent(
        revision_number=number,
        name=name,
        description=description,
        canonical_hash=canonical,
        frontmatter_json=json.dumps(frontmatter or {}, ensure_ascii=False),
        instruction_body=body,
        resources=resources,
        approx_tokens=tokens,
    )


def _root_content(revision_id: str, revision_pk: int) -> RootContent:
    def load() -> RootContent:
        row = SkillRevision.objects.filter(pk=revision_pk).values_list(*ROOT_COLUMNS).get()
        resources = tuple(
            SkillComponent.objects.filter(revision_id=revision_pk)
            .order_by("logical_path")
            .values_list(*RESOURCE_COLUMNS)
        )
        return root_from_row(row, resources)

    return root_content_cached(revision_id, load)


def root_content_cached(revision_id: str, load: Callable[[], RootContent]) -> RootContent:
    """A revision's RootContent from the caches, else ``load()`` (then cached)."""
    content = cached_immutable(
        f"root:{revision_id}", load, encode=_root_encode, decode=_root_decode
    )
    assert content is not None
    return content


def _root_encode(content: RootContent) -> bytes:
    return encode_json(astuple(content))


def _root_decode(payload: bytes) -> RootContent:
    number, name, description, canonical, frontmatter_json, body, resources, tokens = json.loads(
        payload
    )
    return RootContent(
        number,
        name,
        description,
        canonical,
        frontmatter_json,
        body,
        tuple(map(tuple, resources)),
        tokens,
    )


def component_content(revision_id: str, revision_pk: int, path: str) -> ComponentContent | None:
    """One component of a revision the caller has already been allowed to read."""

    def load() -> ComponentContent | None:
        row = (
            SkillComponent.objects.filter(revision_id=revision_pk, logical_path=path)
            .values_list("logical_path", "type", "content_hash", "size", "media_type", "blob__data")
            .first()
        )
        return None if row is None else _component(*row[:5], bytes(row[5]))

    return cached_immutable(
        f"comp:{revision_id}:{_path_key(path)}",
        load,
        encode=_component_encode,
        decode=_component_decode,
    )


def _component(
    logical_path: str, ctype: str, content_hash: str, size: int, media_type: str, raw: bytes
) -> ComponentContent:
    text = is_text(raw)
    return ComponentContent(
        logical_path=logical_path,
        type=ctype,
        content_hash=content_hash,
        size=size,
        media_type=media_type,
        encoding="utf-8" if text else "base64",
        content=raw.decode("utf-8") if text else base64.b64encode(raw).decode("ascii"),
        raw=raw,
    )


def _component_encode(component: ComponentContent) -> bytes:
    """The metadata as one JSON line (JSON escapes every newline), then the raw bytes."""
    header = [
        component.logical_path,
        component.type,
        component.content_hash,
        component.size,
        component.media_type,
    ]
    return encode_json(header) + b"\n" + component.raw


def _component_decode(payload: bytes) -> ComponentContent:
    header, _, raw = payload.partition(b"\n")
    logical_path, ctype, content_hash, size, media_type = json.loads(header)
    return _component(logical_path, ctype, content_hash, size, media_type, raw)
