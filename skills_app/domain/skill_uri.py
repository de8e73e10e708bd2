"""``skill://`` URIs (docs/contract.md §20, the MCP Skills extension's resource mapping).

``skill://WS/SLUG/SKILL.md`` is the skill ``SLUG`` serves in workspace ``WS``, other files are
``skill://WS/SLUG/PATH``, folders ``skill://WS/SLUG[/FOLDER]``; a pinned revision puts its id
before the slug (``skill://WS/REVISION_ID/SLUG/…``: ids start ``rev_``, which no slug can). The
old ``skill://WS/SLUG@REVISION_ID/PATH`` (§18) still parses, for components only (``legacy``).
The authority is the workspace slug, paths are percent-encoded per segment; no database."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, unquote

SCHEME = "skill://"
SKILL_MD = "SKILL.md"
REVISION_PREFIX = "rev_"


@dataclass(frozen=True)
class SkillUri:
    """A parsed ``skill://`` URI. ``path`` is "" for the skill's root folder."""

    workspace: str
    slug: str
    revision_id: str | None
    path: str
    legacy: bool = False

    @property
    def is_skill_md(self) -> bool:
        return self.path == SKILL_MD and not self.legacy

    @property
    def qualified_slug(self) -> str:
        return f"{self.workspace}/{self.slug}"


def skill_uri(workspace: str, slug: str, path: str = "", revision_id: str | None = None) -> str:
    """The URI of ``path`` ("" = the root folder) in the skill, pinned to ``revision_id``."""
    pinned = f"{revision_id}/" if revision_id else ""
    root = f"{SCHEME}{quote(workspace, safe='')}/{pinned}{slug}"
    return f"{root}/{quote(path, safe='/')}" if path else root


def skill_md_uri(workspace: str, slug: str, revision_id: str | None = None) -> str:
    return skill_uri(workspace, slug, SKILL_MD, revision_id)


def parse_skill_uri(uri: object) -> SkillUri | None:
    """The parts of a ``skill://`` URI, or None when it is not one this server could serve."""
    if not isinstance(uri, str) or not uri.startswith(SCHEME):
        return None
    authority, _, rest = uri[len(SCHEME) :].partition("/")
    segments = rest.split("/")
    if not authority or any(not segment for segment in segments):
        return None  # empty segments, a trailing slash, no skill
    head = segments[0]
    if head.startswith(REVISION_PREFIX) and len(segments) >= 2:
        revision_id, slug, path = head, segments[1], segments[2:]
        legacy = False
    elif "@" in head:
        slug, _, revision_id = head.partition("@")
        path, legacy = segments[1:], True
        if not (slug and revision_id and path):
            return None
    else:
        slug, revision_id, path, legacy = head, None, segments[1:], False
    return SkillUri(
        workspace=unquote(authority),
        slug=slug,
        revision_id=revision_id or None,
        path=unquote("/".join(path)),
        legacy=legacy,
    )
