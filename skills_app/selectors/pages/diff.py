"""The diff page's view model: two revisions of one skill, inline or side by side."""

from __future__ import annotations

from dataclasses import dataclass

from skills_app import errors
from skills_app.access import Actor, skill_in
from skills_app.domain.shapes import RevisionPairDiff
from skills_app.models import SkillRevision, Workspace
from skills_app.selectors.pages.skill import SkillHeader, header_fields, header_of
from skills_app.selectors.skills import revision_pair_diff, revisions_of

MODES = ("inline", "side")


@dataclass(frozen=True)
class DiffPage(SkillHeader):
    """The pickers' revisions, the pair compared and its diff (None: no revisions)."""

    revisions: list[SkillRevision]
    old: SkillRevision | None
    new: SkillRevision | None
    mode: str
    diff: RevisionPairDiff | None


def diff_page(
    *, actor: Actor, workspace: Workspace, skill_id: str, wanted: tuple[str, str], mode: str
) -> DiffPage:
    """``wanted`` = the (from, to) revision ids asked for; by default the latest against the
    one before it."""
    scope = skill_in(actor, workspace, skill_id)
    revisions = revisions_of(scope.skill)
    by_id = {revision.revision_id: revision for revision in revisions}
    for revision_id in wanted:
        if revision_id and revision_id not in by_id:
            raise errors.NotFound(f"Revision '{revision_id}' is not a revision of this skill.")
    new = by_id.get(wanted[1]) or (revisions[0] if revisions else None)
    older = [r for r in revisions if new is not None and r.revision_number < new.revision_number]
    old = by_id.get(wanted[0]) or (older[0] if older else new)
    header = header_of(scope, revisions)
    return DiffPage(
        **header_fields(header),
        revisions=revisions,
        old=old,
        new=new,
        mode=mode if mode in MODES else "inline",
        diff=revision_pair_diff(old, new) if old and new else None,
    )
