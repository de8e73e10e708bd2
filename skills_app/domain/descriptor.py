"""What Level 0's semantic retrieval embeds of a revision: its descriptor.

The descriptor is the revision's name, its description and the start of its instruction body,
one blank line apart — what an agent reads first to decide whether a skill fits its task (the
``search_*`` columns hold the same three fields for the lexical side).

The body is cut at ``DESCRIPTOR_BODY_CHARS`` characters, on a word boundary. The model
(all-MiniLM-L6-v2) reads at most 256 word pieces and drops the rest, and it was trained on
texts of up to 128; English prose runs at about four to five characters a word piece, so 600
characters of body plus a name and a description come to roughly 128 to 180 word pieces. The
start of the body adds context to a terse description without drowning the name and the
description in the mean of a long text; on the search evaluation set (docs/search.md) the
name and description alone already score as well as with any longer cut. The cut also bounds
the tokenizer's work whatever the size of the body (up to 6 MiB) and the cost of encoding a
long skill, which grows with its length. Only the first ``DESCRIPTOR_BODY_READ`` characters
of the body are ever looked at, so a caller may fetch no more than that.

Changing anything here changes the vectors: bump the runtime tag of
``infra.embedding.model_version`` with it, and ``manage.py embed_skills --reembed`` replaces
the stored ones (docs/search.md).
"""

from __future__ import annotations

DESCRIPTOR_BODY_CHARS = 600
# The most of the body ``descriptor_text`` reads: the cut plus room for leading whitespace.
DESCRIPTOR_BODY_READ = 2 * DESCRIPTOR_BODY_CHARS


def _head(body: str, limit: int) -> str:
    """The first ``limit`` characters of ``body``, ending on a word boundary when it has one."""
    if len(body) <= limit:
        return body.rstrip()
    head = body[:limit]
    if not body[limit].isspace():
        cut = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
        if cut > 0:
            head = head[:cut]
    return head.rstrip()


def descriptor_text(*, name: str, description: str, body: str) -> str:
    """The text embedded for one revision (pure; the same inputs give the same text)."""
    parts = (
        name.strip(),
        description.strip(),
        _head(body[:DESCRIPTOR_BODY_READ].lstrip(), DESCRIPTOR_BODY_CHARS),
    )
    return "\n\n".join(part for part in parts if part)
