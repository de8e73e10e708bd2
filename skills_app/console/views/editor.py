"""The editor: a new skill, or a new revision from the latest; live preview; the 409 screen."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, QueryDict

from skills_app import errors
from skills_app.console.base import Console, console_view, page_fields
from skills_app.console.components import (
    ComponentRow,
    bundle_components,
    merge_rows,
    normalize_newlines,
    rows_from_post,
    rows_from_revision,
)
from skills_app.console.forms import SkillForm, add_service_error, frontmatter_from_text
from skills_app.domain import lifecycle
from skills_app.domain.bundle import COMPONENT_TYPES, SkillBundle
from skills_app.domain.limits import MAX_BODY_BYTES, MAX_COMPONENT_BYTES, MAX_COMPONENTS
from skills_app.domain.markdown import render_markdown
from skills_app.domain.merge import merge_text, merge_value
from skills_app.domain.render import render
from skills_app.domain.skillmd import frontmatter_yaml
from skills_app.models import Skill, SkillRevision
from skills_app.selectors.diff import bundle_diff
from skills_app.selectors.evals import evaluation_answer
from skills_app.selectors.pages.skill import skill_header
from skills_app.services.evals import lint_triggers
from skills_app.services.skills import skill_save

SAVED_AS: dict[str, str] = {
    SkillRevision.State.DRAFT: "saved as a draft",
    SkillRevision.State.PROPOSED: "proposed for review",
    SkillRevision.State.PUBLISHED: "published",
}


def _publish_label(console: Console) -> str:
    """'Publish' or 'Propose for review': where intent publish lands in this workspace."""
    target = lifecycle.TRANSITIONS_BY_ACTION[lifecycle.SAVE_PUBLISH].target(console.ws.kind)
    return "Publish" if target == lifecycle.PUBLISHED else "Propose for review"


def _initial(revision: SkillRevision | None) -> dict[str, Any]:
    if revision is None:
        return {}
    return {
        "name": revision.name,
        "description": revision.description,
        "frontmatter": frontmatter_yaml(revision.frontmatter),
        "instruction_body": revision.instruction_body,
        "base_revision_id": revision.revision_id,
    }


def _render_editor(
    console: Console,
    *,
    form: SkillForm,
    rows: list[ComponentRow],
    skill: Skill | None,
    status: int = 200,
    conflict: dict[str, Any] | None = None,
    row_problems: list[str] | None = None,
    taken_url: str | None = None,
) -> HttpResponse:
    context: dict[str, Any] = {
        "form": form,
        "rows": rows,
        "next_index": max((row.index for row in rows), default=-1) + 1,
        "component_types": COMPONENT_TYPES,
        "publish_label": _publish_label(console),
        "limits": {
            "body_bytes": MAX_BODY_BYTES,
            "components": MAX_COMPONENTS,
            "component_bytes": MAX_COMPONENT_BYTES,
        },
        "conflict": conflict,
        "row_problems": row_problems or [],
        "taken_url": taken_url,
    }
    if skill is not None:
        header = skill_header(actor=console.actor, workspace=console.ws, skill_id=skill.skill_id)
        context.update(page_fields(header))
        if header.skill.latest_revision is not None:
            context["saved_checks"] = evaluation_answer(revision=header.skill.latest_revision)
    return console.render("console/editor/edit.html", context, status=status)


def _textarea(posted: str, original: str | None) -> str:
    """Browsers send textareas with CRLF: normalise to LF, but keep the base revision's text
    as it is when only its line endings differ (so an unchanged save changes nothing)."""
    if original is not None and normalize_newlines(original) == normalize_newlines(posted):
        return original
    return normalize_newlines(posted)


def _submit(request: HttpRequest, console: Console, skill: Skill | None) -> HttpResponse:
    """Parse the editor POST and save it; errors and conflicts re-open the editor."""
    form = SkillForm(request.POST)
    rows, problems = rows_from_post(request.POST, request.FILES, skill=skill)
    if not form.is_valid() or problems:
        return _render_editor(
            console, form=form, rows=rows, skill=skill, status=400, row_problems=problems
        )
    data = form.cleaned_data
    base = skill.latest_revision if skill is not None else None
    bundle = SkillBundle(
        name=data["name"],
        description=_textarea(data["description"], base.description if base else None),
        instruction_body=_textarea(
            data["instruction_body"], base.instruction_body if base else None
        ),
        frontmatter=data["frontmatter"],
        components=bundle_components(rows),
        source=SkillRevision.Source.CONSOLE,
    )
    slug = skill.slug if skill is not None else data["slug"]
    try:
        outcome = skill_save(
            actor=console.actor,
            workspace=console.ws,
            slug=slug,
            bundle=bundle,
            intent=data["intent"],
            base_revision_id=data["base_revision_id"] or None,
            message=data["message"],
            expect_new=skill is None,
        )
    except errors.SlugTaken as exc:
        add_service_error(form, exc)
        return _render_editor(
            console,
            form=form,
            rows=rows,
            skill=None,
            status=exc.status,
            taken_url=console.url("skill_detail", exc.details["skill_id"]),
        )
    except errors.Conflict:
        assert skill is not None  # only a new revision carries a base revision to be stale
        return _conflict(console, form=form, rows=rows, skill=skill)
    except errors.XmemoError as exc:
        add_service_error(form, exc)
        return _render_editor(console, form=form, rows=rows, skill=skill, status=exc.status)
    revision = outcome.revision
    if outcome.created:
        messages.success(
            request,
            f"Revision #{revision.revision_number} {SAVED_AS.get(revision.state, 'saved')}.",
        )
    else:
        messages.info(
            request,
            f"Nothing changed since revision #{revision.revision_number}, so no new revision "
            f"was made (it is {revision.state}).",
        )
    return console.redirect("skill_detail", revision.skill.skill_id)


def _merged_form(
    *, form: SkillForm, base: SkillRevision | None, latest: SkillRevision
) -> tuple[QueryDict, list[dict[str, Any]]]:
    """What was posted, each field its value (not a list repr), rebased onto ``latest``: a
    three-way merge of each text field from ``base``, and the places both sides changed."""
    posted = QueryDict(mutable=True)
    posted.update(form.data)
    posted["base_revision_id"] = latest.revision_id
    if base is None:
        return posted, []
    label = f"revision #{latest.revision_number}"
    overlaps: list[dict[str, Any]] = []
    name, both = merge_value(base.name, posted.get("name", ""), latest.name)
    posted["name"] = name
    if both:
        overlaps.append({"where": "Name", "mine": name, "theirs": latest.name})
    for field, title, base_text, theirs_text in (
        ("description", "Description", base.description, latest.description),
        ("frontmatter", "Frontmatter", *(frontmatter_yaml(r.frontmatter) for r in (base, latest))),
        ("instruction_body", "Instructions", base.instruction_body, latest.instruction_body),
    ):
        posted_text = normalize_newlines(posted.get(field, ""))
        merged = merge_text(base_text, posted_text, theirs_text, theirs_label=label)
        posted[field] = merged.text
        overlaps += [
            {"where": f"{title}, line {o.line}", "mine": o.mine, "theirs": o.theirs}
            for o in merged.overlaps
        ]
    return posted, overlaps


def _conflict(
    console: Console,
    *,
    form: SkillForm,
    rows: list[ComponentRow],
    skill: Skill,
) -> HttpResponse:
    """409: someone saved first. Their changes since the author's base revision are merged
    into the form; overlapping changes keep both sides and are listed."""
    latest = skill.latest_revision
    assert latest is not None
    base = _base_revision(console, skill, form.data.get("base_revision_id", ""))
    posted, overlaps = _merged_form(form=form, base=base, latest=latest)
    if base is not None:
        rows, notes = merge_rows(
            base=rows_from_revision(base),
            mine=rows,
            theirs=rows_from_revision(latest),
            theirs_label=f"revision #{latest.revision_number}",
        )
        overlaps += notes
    rebased = SkillForm(posted)
    rebased.is_valid()
    merged = SkillBundle(
        name=posted.get("name", ""),
        description=posted.get("description", ""),
        instruction_body=posted.get("instruction_body", ""),
        frontmatter=rebased.cleaned_data.get("frontmatter") or {},
        components=bundle_components(rows),
    )
    conflict = {
        "latest": latest,
        "base": base,
        "overlaps": overlaps,
        "diff": bundle_diff(latest, merged, number=latest.revision_number + 1),
    }
    return _render_editor(
        console, form=rebased, rows=rows, skill=skill, status=409, conflict=conflict
    )


def _base_revision(console: Console, skill: Skill, revision_id: str) -> SkillRevision | None:
    """The revision the author started from (of this skill), or None."""
    try:
        revision = console.revision(revision_id)
    except errors.NotFound:
        return None
    return revision if revision.skill_id == skill.pk else None


@console_view()
def skill_new(request: HttpRequest, console: Console) -> HttpResponse:
    if request.method == "POST":
        return _submit(request, console, None)
    return _render_editor(console, form=SkillForm(), rows=[], skill=None)


@console_view()
def skill_edit(request: HttpRequest, console: Console, skill_id: str) -> HttpResponse:
    skill = console.skill(skill_id)
    if request.method == "POST":
        return _submit(request, console, skill)
    latest = skill.latest_revision
    return _render_editor(
        console,
        form=SkillForm(initial=_initial(latest)),
        rows=rows_from_revision(latest),
        skill=skill,
    )


@console_view(post_only=True)
def trigger_checks(request: HttpRequest, console: Console) -> HttpResponse:
    """The author's loop (docs/evals.md): the unsaved name, description and body standing in
    for the skill, against the skills this workspace serves, with the trigger set of its latest
    revision — nothing is stored. Answers a fragment htmx swaps in beside the saved checks."""
    base_id = request.POST.get("base_revision_id", "")
    base = console.revision(base_id) if base_id else None
    if base is None:
        return console.render("console/editor/_trigger_checks.html", {"checks": None})
    try:
        frontmatter = frontmatter_from_text(request.POST.get("frontmatter", ""))
    except errors.ValidationFailed:
        frontmatter = dict(base.frontmatter)
    bundle = SkillBundle(
        name=request.POST.get("name", "") or base.name,
        description=request.POST.get("description", "") or base.description,
        instruction_body=normalize_newlines(request.POST.get("instruction_body", "")),
        frontmatter=frontmatter,
        components=None,  # the latest revision's trigger set
    )
    result = lint_triggers(workspace=console.ws, slug=base.skill.slug, bundle=bundle)
    checks = None if result is None else {"state": "done", **result}
    return console.render(
        "console/editor/_trigger_checks.html",
        {"checks": checks, "was": evaluation_answer(revision=base), "baseline": base},
    )


@console_view(post_only=True)
def preview(request: HttpRequest, console: Console) -> HttpResponse:
    """The live preview fragment: the body as Markdown, optionally with arguments rendered."""
    body = request.POST.get("instruction_body", "")
    arguments = request.POST.get("arguments", "")
    warnings: list[str] = []
    if arguments:
        try:
            names = frontmatter_from_text(request.POST.get("frontmatter", "")).get("argument-names")
        except errors.ValidationFailed:
            names = None
        try:
            rendered = render(
                body,
                arguments=arguments,
                argument_names=[str(n) for n in names] if isinstance(names, list) else [],
                context={"XMEMO_WORKSPACE": console.ws.slug},
            )
        except errors.RenderedTooLarge as exc:
            # A fragment htmx swaps in, so the author sees why the preview stopped.
            return console.render("console/editor/_preview.html", {"error": exc.message})
        body = rendered.text
        warnings = [w["message"] for w in rendered.warnings]
    return console.render(
        "console/editor/_preview.html", {"html": render_markdown(body), "warnings": warnings}
    )
