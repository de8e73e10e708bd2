"""The canonical hash of a revision's content (docs/contract.md §3).

The document is specified byte for byte so anyone can recompute the hash from a Source
Capsule; change nothing here without changing docs/contract.md §3 (and every stored hash) with it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

CANONICAL_VERSION = 1


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_document(
    *,
    name: str,
    description: str,
    frontmatter: Mapping[str, Any],
    instruction_body: str,
    components: Iterable[tuple[str, str, str]],
) -> bytes:
    """The UTF-8 JSON bytes that are hashed; ``components`` are ``(path, type, sha256 hex)``.

    Components are sorted by path in code point order (Python's ``str`` ordering), so the
    caller's order never matters.
    """
    document = {
        "v": CANONICAL_VERSION,
        "name": name,
        "description": description,
        "frontmatter": dict(frontmatter),
        "instruction_body": instruction_body,
        "components": [
            {"path": path, "type": type_, "sha256": sha256}
            for path, type_, sha256 in sorted(components, key=lambda entry: entry[0])
        ],
    }
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def canonical_hash(
    *,
    name: str,
    description: str,
    frontmatter: Mapping[str, Any],
    instruction_body: str,
    components: Iterable[tuple[str, str, str]],
) -> str:
    return sha256_hex(
        canonical_document(
            name=name,
            description=description,
            frontmatter=frontmatter,
            instruction_body=instruction_body,
            components=components,
        )
    )
