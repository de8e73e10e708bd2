"""What Level 0's semantic retrieval embeds of a revision: its descriptor.

Name, description and the start of the instruction body (cut at ``DESCRIPTOR_BODY_CHARS`` on a
word boundary), one blank line apart: what an agent reads first to judge a skill. The cut keeps
the text within what the model reads (about 128 to 180 word pieces) without drowning name and
description in a long body's mean, and bounds the encoder's work (docs/search.md, *By
meaning*). Only the first ``DESCRIPTOR_BODY_READ`` characters of a body are looked at. Changing
anything here changes the vectors: bump ``encoder.embedding.model_version``'s runtime tag with it
and run ``manage.py embed_skills --reembed``."""

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
