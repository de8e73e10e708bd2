"""Diffs the API does not serve as such: a stored revision against content that is not a
stored pair of revisions (unsaved content on the console's 409 screen, a first revision under
review). Two stored revisions are diffed by ``selectors.skills.skill_diff``."""

from __future__ import annotations

from skills_app.domain.bundle import SkillBundle
from skills_app.domain.diff import diff_snapshots, snapshot_of
from skills_app.domain.shapes.diff import RevisionPairDiff
from skills_app.models import SkillRevision
from skills_app.selectors.revisions import revision_bundle

_NOTHING = SkillBundle(name="", description="", instruction_body="", components=())


def bundle_diff(old: SkillRevision | None, new: SkillBundle, *, number: int) -> RevisionPairDiff:
    """A saved revision (None: nothing yet) against ``new`` (numbered ``number``)."""
    before = revision_bundle(old) if old is not None else _NOTHING
    return diff_snapshots(
        snapshot_of(
            before,
            revision_id=old.revision_id if old is not None else "",
            number=old.revision_number if old is not None else 0,
        ),
        snapshot_of(new, revision_id="", number=number),
    )
