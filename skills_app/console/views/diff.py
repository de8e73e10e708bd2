"""The diff between any two revisions of a skill, inline or side by side."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from skills_app import errors
from skills_app.console.base import Console, console_view
from skills_app.console.views.skills import skill_context
from skills_app.selectors import skills as skill_selectors

MODES = ("inline", "side")


@console_view()
def skill_diff(request: HttpRequest, console: Console, skill_id: str) -> HttpResponse:
    """``?from=&to=`` revision ids; by default the latest against the one before it."""
    skill = console.skill(skill_id)
    revisions = skill_selectors.revision_timeline(actor=console.actor, skill=skill)
    by_id = {revision.revision_id: revision for revision in revisions}
    wanted = (request.GET.get("from", ""), request.GET.get("to", ""))
    for revision_id in wanted:
        if revision_id and revision_id not in by_id:
            raise errors.NotFound(f"Revision '{revision_id}' is not a revision of this skill.")
    new = by_id.get(wanted[1]) or (revisions[0] if revisions else None)
    older = [r for r in revisions if new is not None and r.revision_number < new.revision_number]
    old = by_id.get(wanted[0]) or (older[0] if older else new)
    mode = request.GET.get("mode", "inline")
    return console.render(
        "console/diff/diff.html",
        {
            **skill_context(console, skill),
            "revisions": revisions,
            "old": old,
            "new": new,
            "mode": mode if mode in MODES else "inline",
            "diff": skill_selectors.skill_diff(
                actor=console.actor,
                skill_id=skill.skill_id,
                from_revision_id=old.revision_id,
                to_revision_id=new.revision_id,
            )
            if old and new
            else None,
        },
    )
