"""The diff between any two revisions of a skill, inline or side by side."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from skills_app.console.base import Console, console_view
from skills_app.selectors.pages.diff import diff_page


@console_view()
def skill_diff(request: HttpRequest, console: Console, skill_id: str) -> HttpResponse:
    """``?from=&to=`` revision ids; by default the latest against the one before it."""
    page = diff_page(
        actor=console.actor,
        workspace=console.ws,
        skill_id=skill_id,
        wanted=(request.GET.get("from", ""), request.GET.get("to", "")),
        mode=request.GET.get("mode", "inline"),
    )
    return console.render_page("console/diff/diff.html", page)
