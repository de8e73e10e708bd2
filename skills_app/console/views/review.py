"""Review: the queue of proposed revisions, the review page, and every lifecycle button."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.http import url_has_allowed_host_and_scheme

from skills_app import errors
from skills_app.console.base import Console, console_view
from skills_app.domain import lifecycle
from skills_app.models import SkillRevision
from skills_app.selectors.pages.review import review_page
from skills_app.selectors.reviews import awaiting_review
from skills_app.services.reviews import revision_comment_add
from skills_app.services.scans import scan_override
from skills_app.services.skills import revision_restore, revision_transition

DONE = {
    "propose": "proposed for review",
    "withdraw": "withdrawn back to draft",
    "approve": "approved and published",
    "reject": "rejected and returned to its author as a draft",
    "request_changes": "returned to its author with your requested changes",
    "publish": "published",
    "deprecate": "deprecated",
}


@console_view()
def review_queue(request: HttpRequest, console: Console) -> HttpResponse:
    proposals = awaiting_review(actor=console.actor, workspace=console.ws)
    return console.render("console/review/queue.html", {"proposals": proposals})


@console_view()
def review(request: HttpRequest, console: Console, revision_id: str) -> HttpResponse:
    page = review_page(actor=console.actor, workspace=console.ws, revision_id=revision_id)
    return console.render_page("console/review/review.html", page)


@console_view(post_only=True)
def scan_override_action(request: HttpRequest, console: Console, revision_id: str) -> HttpResponse:
    """An owner's override of a blocking scan, with a reason (docs/contract.md §21)."""
    revision = console.revision(revision_id)
    try:
        scan_override(actor=console.actor, revision=revision, reason=request.POST.get("reason", ""))
    except errors.NotFound:
        raise
    except errors.XmemoError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, "Scan overridden: the revision may now be approved and run.")
    return console.redirect("review", revision.revision_id)


@console_view(post_only=True)
def revision_comment(request: HttpRequest, console: Console, revision_id: str) -> HttpResponse:
    """Add a comment to the review conversation; a refusal is a flash message."""
    revision = console.revision(revision_id)
    line = request.POST.get("line", "")
    try:
        revision_comment_add(
            actor=console.actor,
            revision=revision,
            body=request.POST.get("body", ""),
            line=int(line) if line.isdigit() else None,
        )
    except errors.NotFound:
        raise
    except errors.XmemoError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, "Comment added.")
    return console.redirect("review", revision.revision_id)


def _back(request: HttpRequest, console: Console, revision: SkillRevision) -> HttpResponseRedirect:
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return HttpResponseRedirect(target)
    return console.redirect("skill_detail", revision.skill.skill_id)


@console_view(post_only=True)
def revision_action(
    request: HttpRequest, console: Console, revision_id: str, action: str
) -> HttpResponse:
    """One lifecycle action (or restore) on a revision; the outcome is a flash message."""
    revision = console.revision(revision_id)
    if action not in lifecycle.REVISION_ACTIONS:
        raise errors.NotFound(f"There is no action '{action}'.")
    comment = request.POST.get("comment", "").strip()
    try:
        if action == lifecycle.RESTORE:
            outcome = revision_restore(actor=console.actor, revision=revision)
            restored = outcome.revision
            messages.success(
                request,
                f"Revision #{revision.revision_number} restored as revision "
                f"#{restored.revision_number} ({restored.state}).",
            )
            return console.redirect("skill_detail", revision.skill.skill_id)
        revision_transition(actor=console.actor, revision=revision, action=action, comment=comment)
    except errors.NotFound:
        raise
    except errors.XmemoError as exc:
        messages.error(request, exc.message)
        return _back(request, console, revision)
    if action == lifecycle.APPROVE:
        moved = console.revision(revision_id)
        if moved.state == SkillRevision.State.PROPOSED:
            messages.success(request, f"Approval recorded on revision #{revision.revision_number}.")
            return _back(request, console, revision)
    messages.success(request, f"Revision #{revision.revision_number} {DONE[action]}.")
    if action in (lifecycle.APPROVE, lifecycle.REJECT, lifecycle.REQUEST_CHANGES):
        return console.redirect("skill_detail", revision.skill.skill_id)
    return _back(request, console, revision)
