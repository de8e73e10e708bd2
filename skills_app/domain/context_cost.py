"""What loading a skill costs an agent's context: ``approx_tokens`` (docs/contract.md §5).

An estimate an agent can budget with before loading anything, not a tokenizer's count: about
four ASCII characters per token and one token per other character, rounded up, over the JSON
text of the Level 1 answer a revision fixes (name, description, frontmatter, body and the
resource manifest, encoded as ``domain.json_bytes`` does) plus ``ANSWER_ALLOWANCE`` for the rest of
the answer. A revision never changes, so it is computed once, when the revision is stored."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from skills_app.domain.json_bytes import encode_json

CHARS_PER_TOKEN = 4
# The rest of a Level 1 answer: ``{"kind":"root","data":{…}}`` with skill_id, slug, workspace,
# revision_id, revision_number, state, canonical_hash, resolved_by and approx_tokens — about
# 300 characters of ASCII for typical slugs.
ANSWER_ALLOWANCE = 75

# One resource of the manifest: (logical_path, type, content_hash, size, media_type).
ResourceRow = tuple[str, str, str, int, str]


def text_tokens(text: str) -> int:
    """ceil(ASCII characters / 4) + one per other character."""
    other = len(text) - len(text.encode("ascii", "ignore"))
    ascii_chars = len(text) - other
    return -(-ascii_chars // CHARS_PER_TOKEN) + other


def _json_text(value: Any) -> str:
    return encode_json(value).decode("utf-8")


def revision_tokens(
    *,
    name: str,
    description: str,
    frontmatter: Mapping[str, Any],
    instruction_body: str,
    resources: Iterable[ResourceRow],
) -> int:
    """The estimate of the Level 1 answer serving this revision (without ``arguments``)."""
    content = {
        "name": name,
        "description": description,
        "frontmatter": dict(frontmatter),
        "instruction_body": instruction_body,
        "resources": [
            {
                "logical_path": path,
                "type": ctype,
                "content_hash": content_hash,
                "size": size,
                "media_type": media_type,
            }
            for path, ctype, content_hash, size, media_type in resources
        ],
    }
    return text_tokens(_json_text(content)) + ANSWER_ALLOWANCE


def answer_member_tokens(key: str, value: Any) -> int:
    """What one more member of an answer adds (``rendered_body``, ``render_warnings``, given
    ``arguments``)."""
    return text_tokens(f',"{key}":' + _json_text(value))
