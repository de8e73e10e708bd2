"""A job's page and its progress fragment (``console/views/jobs.py`` renders them as they are):
the job as it reads now, and what its bar and its list of imported skills show; the export
page's picker and recent exports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skills_app import errors
from skills_app.access import Actor, job_for
from skills_app.models import Job, Workspace
from skills_app.selectors.jobs import job_as_read, job_list_recent
from skills_app.selectors.skills import skill_choices

_LISTS_SKILLS = (Job.Kind.IMPORT, Job.Kind.RESTORE)


@dataclass(frozen=True)
class JobPage:
    """``imported``: the skills a finished import or restore brought (its result's
    ``skills``); the bar is full once the job succeeded."""

    job: Job
    finished: bool
    imported: list[Any]
    progress_value: int
    progress_max: int


def job_page(*, actor: Actor, workspace: Workspace, job_id: str) -> JobPage:
    job = job_for(actor, job_id)
    if job.workspace_id != workspace.pk:
        raise errors.NotFound("Not found in this workspace.")
    job = job_as_read(job)
    succeeded = job.state == Job.State.SUCCEEDED
    total = max(job.progress_total, 1)
    return JobPage(
        job=job,
        finished=job.state in (Job.State.SUCCEEDED, Job.State.FAILED),
        imported=job.result.get("skills", [])
        if job.kind in _LISTS_SKILLS and succeeded and job.result
        else [],
        progress_value=total if succeeded else job.progress_done,
        progress_max=total,
    )


@dataclass(frozen=True)
class ExportPage:
    """``skill_choices``: (skill_id, slug) of the skills the actor reads here, by slug;
    ``jobs``: the workspace's latest ``recent`` exports, newest first."""

    skill_choices: list[tuple[str, str]]
    jobs: list[Job]


def export_page(*, actor: Actor, workspace: Workspace, recent: int) -> ExportPage:
    return ExportPage(
        skill_choices=skill_choices(actor=actor, workspace=workspace),
        jobs=job_list_recent(actor=actor, workspace=workspace, kind=Job.Kind.EXPORT, limit=recent),
    )
