"""What loading a skill costs an agent's context: ``approx_tokens`` (docs/contract.md §5).

An estimate, not a tokenizer's count — every model tokenizes differently, and the point is a
figure an agent can budget with before it loads anything. The heuristic: about four characters
of ASCII text per token, one token per other character (accented letters, CJK, emoji: most
tokenizers spend a token or more on each), rounded up.

It is applied to the JSON text of the Level 1 answer that a revision fixes — name, description,
frontmatter, instruction body and the resource manifest (path, type, hash, size and media type
of each component; not their contents, which are Level 2) — encoded as the answer is
(``domain.wire``), plus ``ANSWER_ALLOWANCE`` for the rest of the answer (its identifiers,
state and field names). A revision's content never changes, so the estimate is computed once,
when the revision is stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from skills_app.domain.wire import encode_json

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
