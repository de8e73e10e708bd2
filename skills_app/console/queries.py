"""The console's reads that belong to the read side: Level 0 search and diffs.

Thin adapters over ``selectors`` (the same functions the API answers with), plus the one diff
the API never makes: the latest revision against unsaved content, for the 409 screen.
"""

from __future__ import annotations

from typing import Any

from ..domain.bundle import SkillBundle
from ..domain.canonical import sha256_hex
from ..domain.diff import ComponentSnapshot, RevisionSnapshot, diff_snapshots
from ..domain.paths import is_text
from ..models import SkillRevision
from ..selectors.search import search_skills
from ..selectors.skills import skill_diff
from .base import Console
from .components import bundle_components, rows_from_revision

SEARCH_LIMIT = 50  # the Level 0 maximum


def search_skill_ids(console: Console, query: str) -> list[str]:
    """Level 0 search in the console's workspace, best first."""
    results = search_skills(
        actor=console.actor, text=query, workspace=console.ws, limit=SEARCH_LIMIT
    )
    return [result["skill_id"] for result in results]


def revision_diff(console: Console, old: SkillRevision, new: SkillRevision) -> dict[str, Any]:
    """The SPEC §10 diff of two revisions of one skill, exactly as the API answers it."""
    return skill_diff(
        actor=console.actor,
        skill_id=new.skill.skill_id,
        from_revision_id=old.revision_id,
        to_revision_id=new.revision_id,
    )


def _bundle_snapshot(bundle: SkillBundle, *, revision_id: str, number: int) -> RevisionSnapshot:
    return RevisionSnapshot(
        revision_id=revision_id,
        revision_number=number,
        name=bundle.name,
        description=bundle.description,
        frontmatter=bundle.frontmatter,
        instruction_body=bundle.instruction_body,
        components={
            c.logical_path: ComponentSnapshot(
                type=c.type,
                sha256=sha256_hex(c.content),
                size=len(c.content),
                text=c.content.decode("utf-8") if is_text(c.content) else None,
            )
            for c in bundle.components or ()
        },
    )


def revision_bundle(revision: SkillRevision) -> SkillBundle:
    return SkillBundle(
        name=revision.name,
        description=revision.description,
        instruction_body=revision.instruction_body,
        frontmatter=revision.frontmatter,
        components=bundle_components(rows_from_revision(revision)),
    )


_NOTHING = SkillBundle(name="", description="", instruction_body="", components=())


def bundle_diff(old: SkillRevision | None, new: SkillBundle, *, number: int) -> dict[str, Any]:
    """A saved revision (None: nothing yet) against content that is not a stored pair of
    revisions: unsaved content on the 409 screen, or a first revision under review."""
    before = revision_bundle(old) if old is not None else _NOTHING
    return diff_snapshots(
        _bundle_snapshot(
            before,
            revision_id=old.revision_id if old is not None else "",
            number=old.revision_number if old is not None else 0,
        ),
        _bundle_snapshot(new, revision_id="", number=number),
    )
