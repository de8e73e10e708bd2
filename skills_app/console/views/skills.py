"""Skills: the list (Level 0 search, filters), a skill's page, its components, archive/delete."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse

from skills_app import errors
from skills_app.console.base import Console, console_view, page_fields, page_query
from skills_app.domain import lifecycle
from skills_app.gateway.downloads import download_response
from skills_app.models import Skill
from skills_app.selectors.pages.skill import (
    component_page,
    skill_header,
    skill_page,
)
from skills_app.selectors.skills import (
    revision_component,
    skill_rows,
)
from skills_app.services import labels as label_services
from skills_app.services import skills as skill_services

STATE_FILTERS = lifecycle.STATES
STATUS_FILTERS = ("active", "archived", "all")
# The list's orders: by slug, or the most recently recalled first (stale skills sink).
SORTS = {"name": "slug", "recalled": "recalled"}
PAGE_SIZE = 50


@console_view()
def skill_list(request: HttpRequest, console: Console) -> HttpResponse:
    query = request.GET.get("q", "").strip()
    state = request.GET.get("state", "")
    status = request.GET.get("status", "active")
    state = state if state in STATE_FILTERS else ""
    status = status if status in STATUS_FILTERS else "active"
    sort = request.GET.get("sort", "name")
    sort = sort if sort in SORTS else "name"

    rows = skill_rows(
        actor=console.actor,
        workspace=console.ws.slug,
        query=query,
        state=state or None,
        status=None if status == "all" else status,
        sort=SORTS[sort],
    )
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    return console.render(
        "console/skills/list.html",
        {
            "page": page,
            "query": query,
            "state": state,
            "status": status,
            "state_filters": STATE_FILTERS,
            "status_filters": STATUS_FILTERS,
            "sort": sort,
            "sorts": SORTS,
            "page_query": page_query(request),
        },
    )


@console_view()
def skill_detail(request: HttpRequest, console: Console, skill_id: str) -> HttpResponse:
    page = skill_page(
        actor=console.actor,
        workspace=console.ws,
        skill_id=skill_id,
        wanted=request.GET.get("revision", ""),
    )
    return console.render_page("console/skills/detail.html", page)


@console_view()
def component_view(
    request: HttpRequest, console: Console, revision_id: str, path: str
) -> HttpResponse:
    page = component_page(
        actor=console.actor, workspace=console.ws, revision_id=revision_id, path=path
    )
    return console.render_page("console/skills/component.html", page)


@console_view()
def component_download(
    request: HttpRequest, console: Console, revision_id: str, path: str
) -> HttpResponse:
    """The raw bytes, always as a download: a component is never rendered by the browser."""
    revision = console.revision(revision_id)
    component = revision_component(actor=console.actor, revision=revision, logical_path=path)
    return download_response(component.raw, filename=path, content_type="application/octet-stream")


@console_view(post_only=True)
def skill_status(request: HttpRequest, console: Console, skill_id: str) -> HttpResponse:
    skill = console.skill(skill_id)
    status = request.POST.get("status", "")
    try:
        skill_services.skill_set_status(actor=console.actor, skill=skill, status=status)
    except errors.XmemoError as exc:
        messages.error(request, exc.message)
    else:
        verb = "archived" if status == Skill.Status.ARCHIVED else "active again"
        messages.success(request, f"'{skill.slug}' is {verb}.")
    return console.redirect("skill_detail", skill.skill_id)


@console_view(post_only=True)
def skill_label(request: HttpRequest, console: Console, skill_id: str) -> HttpResponse:
    """Move a label onto a revision ("move label here" on the timeline), or remove it."""
    skill = console.skill(skill_id)
    name = request.POST.get("name", "").strip()
    try:
        if request.POST.get("remove"):
            label_services.label_delete(actor=console.actor, skill=skill, name=name)
            done = f"Label '{name}' removed."
        else:
            label = label_services.label_move(
                actor=console.actor,
                skill=skill,
                name=name,
                revision_id=request.POST.get("revision_id", ""),
            )
            done = f"Label '{name}' now points at #{label.revision.revision_number}."
    except errors.XmemoError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, done)
    return console.redirect("skill_detail", skill.skill_id)


@console_view()
def skill_delete(request: HttpRequest, console: Console, skill_id: str) -> HttpResponse:
    """GET asks for confirmation (typing the slug), POST deletes for good."""
    skill = console.skill(skill_id)
    error = ""
    if request.method == "POST":
        if request.POST.get("confirm_slug", "").strip() != skill.slug:
            error = f"Type '{skill.slug}' exactly to confirm."
        else:
            try:
                skill_services.skill_delete(actor=console.actor, skill=skill)
            except errors.XmemoError as exc:
                error = exc.message
            else:
                messages.success(request, f"'{skill.slug}' and all its revisions were deleted.")
                return console.redirect("skill_list")
    header = skill_header(actor=console.actor, workspace=console.ws, skill_id=skill.skill_id)
    return console.render("console/skills/delete.html", {**page_fields(header), "error": error})
