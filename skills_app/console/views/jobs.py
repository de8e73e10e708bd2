"""Import and export: start a job, watch its progress (htmx polling), fetch the result."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from skills_app import errors
from skills_app.console.base import Console, console_view
from skills_app.console.forms import ExportForm, ImportForm, RestoreForm, add_service_error
from skills_app.gateway.downloads import download_response
from skills_app.models import Job
from skills_app.selectors.jobs import job_list_recent, job_output
from skills_app.selectors.pages.jobs import export_page, job_page
from skills_app.services import jobs as job_services

RECENT_JOBS = 10


def _recent(console: Console, kind: str) -> list[Job]:
    return job_list_recent(actor=console.actor, workspace=console.ws, kind=kind, limit=RECENT_JOBS)


@console_view()
def import_start(request: HttpRequest, console: Console) -> HttpResponse:
    form = ImportForm(request.POST or None, request.FILES or None)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            data = form.cleaned_data
            upload = data["file"]
            try:
                job = job_services.import_start(
                    actor=console.actor,
                    workspace=console.ws,
                    data=upload.read() if upload else None,
                    filename=upload.name if upload else "",
                    url=data["url"] or None,
                    slug=data["slug"].strip() or None,
                    intent=data["intent"],
                )
            except errors.XmemoError as exc:
                add_service_error(form, exc)
                status = exc.status
            else:
                return console.redirect("job_detail", job.job_id)
    return _import_page(console, form=form, restore_form=RestoreForm(), status=status)


def _import_page(
    console: Console, *, form: ImportForm, restore_form: RestoreForm, status: int
) -> HttpResponse:
    return console.render(
        "console/jobs/import.html",
        {"form": form, "restore_form": restore_form, "jobs": _recent(console, Job.Kind.IMPORT)},
        status=status,
    )


@console_view(post_only=True)
def restore_start(request: HttpRequest, console: Console) -> HttpResponse:
    """The import page's other action: restore a workspace backup into this empty team."""
    form = RestoreForm(request.POST, request.FILES)
    status = 400
    if form.is_valid():
        upload = form.cleaned_data["backup"]
        try:
            job = job_services.restore_start(
                actor=console.actor,
                workspace=console.ws,
                data=upload.read(),
                filename=upload.name or "",
            )
        except errors.XmemoError as exc:
            add_service_error(form, exc)
            status = exc.status
        else:
            return console.redirect("job_detail", job.job_id)
    return _import_page(console, form=ImportForm(), restore_form=form, status=status)


@console_view()
def export_start(request: HttpRequest, console: Console) -> HttpResponse:
    page = export_page(actor=console.actor, workspace=console.ws, recent=RECENT_JOBS)
    initial = (
        {"target": "revision", "revision_id": request.GET["revision"]}
        if (request.GET.get("revision"))
        else {"skill_id": request.GET.get("skill", "")}
    )
    form = ExportForm(request.POST or None, initial=initial, skill_choices=page.skill_choices)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                job = _export(console, form)
            except errors.XmemoError as exc:
                if isinstance(exc, errors.NotFound):
                    exc = errors.ValidationFailed(exc.message, details={"field": "revision_id"})
                add_service_error(form, exc)
                status = exc.status
            else:
                return console.redirect("job_detail", job.job_id)
    return console.render(
        "console/jobs/export.html", {"form": form, "jobs": page.jobs}, status=status
    )


def _export(console: Console, form: ExportForm) -> Job:
    data = form.cleaned_data
    target = data["target"]
    if target == "revision":
        revision_id = data["revision_id"].strip()
        if not revision_id:
            raise errors.ValidationFailed(
                "Give the id of the revision to export.", details={"field": "revision_id"}
            )
        revision = console.revision(revision_id)
        return job_services.export_start(actor=console.actor, revision=revision)
    if target == "skill":
        if not data["skill_id"]:
            raise errors.ValidationFailed(
                "Choose a skill to export.", details={"field": "skill_id"}
            )
        skill = console.skill(data["skill_id"])
        return job_services.export_start(actor=console.actor, skill=skill)
    return job_services.export_start(actor=console.actor, workspace=console.ws)


@console_view()
def job_detail(request: HttpRequest, console: Console, job_id: str) -> HttpResponse:
    page = job_page(actor=console.actor, workspace=console.ws, job_id=job_id)
    return console.render_page("console/jobs/job.html", page)


@console_view()
def job_progress(request: HttpRequest, console: Console, job_id: str) -> HttpResponse:
    """The progress fragment htmx polls; a finished job's fragment stops the polling."""
    page = job_page(actor=console.actor, workspace=console.ws, job_id=job_id)
    return console.render_page("console/jobs/_progress.html", page)


@console_view()
def job_download(request: HttpRequest, console: Console, job_id: str) -> HttpResponse:
    """The export's file, answered like the API: 404 for a job that is not an export (or whose
    file is gone), 409 for an export that has not succeeded."""
    console.job(job_id)  # in this workspace
    name, data = job_output(actor=console.actor, job_id=job_id)
    return download_response(data, filename=name, content_type="application/zip")
