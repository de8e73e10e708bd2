"""The read side of jobs: one job as the API answers it (docs/contract.md §7)."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Count
from django.utils import timezone

from skills_app import errors
from skills_app.access import Actor, job_for, job_readable, require_scope
from skills_app.domain import shapes
from skills_app.domain.jobs import stale_verdict
from skills_app.models import Job, Workspace


def job_as_read(job: Job, *, now: datetime | None = None) -> Job:
    """``job`` as it reads at ``now``: one whose worker vanished (or that no worker took) reads
    as failed. Only the returned object changes; the workers write the same verdict
    (``services.jobs.run.jobs_fail_stale``)."""
    now = now or timezone.now()
    message = stale_verdict(
        state=job.state, started_at=job.started_at, created_at=job.created_at, now=now
    )
    if message is not None:
        job.state = Job.State.FAILED
        job.error = errors.JobFailed(message).as_dict()
        job.finished_at = now
    return job


def job_get(*, actor: Actor, job_id: str) -> Job:
    """A job of a workspace the actor may read, as it reads now (``job_as_read``)."""
    require_scope(actor, "skills:read")
    return job_as_read(job_for(actor, job_id))


def job_list_recent(*, actor: Actor, workspace: Workspace, kind: str, limit: int) -> list[Job]:
    """The workspace's latest jobs of ``kind`` the actor may open (the access gate's rule: a
    member does not see the admins' workspace exports), newest first, as they read now."""
    require_scope(actor, "skills:read")
    jobs = (
        Job.objects.filter(workspace=workspace, kind=kind)
        .defer("input_data", "output_data")
        .select_related("created_by", "workspace")
        .order_by("-created_at")[: limit * 2]
    )
    return [job_as_read(job) for job in jobs if job_readable(actor, job)][:limit]


def job_as_dict(job: Job) -> shapes.Job:
    return {
        "job_id": job.job_id,
        "kind": job.kind,
        "state": job.state,
        "workspace": job.workspace.slug,
        "progress": {"done": job.progress_done, "total": job.progress_total},
        "result": job.result,
        "error": job.error,
        "log": job.log,
        "created_at": job.created_at.isoformat(),
        "started_at": job.started_at.isoformat() if job.started_at else None,
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
    }


def job_output(*, actor: Actor, job_id: str) -> tuple[str, bytes]:
    """The file a finished export produced: (filename, bytes)."""
    job = job_get(actor=actor, job_id=job_id)
    if job.kind != Job.Kind.EXPORT:
        raise errors.NotFound("Only export jobs have a download.", details={"job_id": job_id})
    if job.state != Job.State.SUCCEEDED:
        raise errors.Conflict(
            f"The export is {job.state}; poll the job until it has succeeded.",
            details={"job_id": job_id, "state": job.state},
        )
    data = Job.objects.filter(pk=job.pk).values_list("output_data", flat=True).get()
    if data is None:
        raise errors.NotFound(
            "This export's file is gone: a skill it held was deleted for good.",
            details={"job_id": job_id},
        )
    return job.output_name or f"{job.job_id}.zip", bytes(data)


def jobs_by_kind_and_state() -> dict[tuple[str, str], int]:
    """How many jobs of each kind are in each state, over every workspace: counts only, for the
    operator's metrics (no tenant is named). Every pair is present, zeros included."""
    counts = dict.fromkeys(((k, s) for k in Job.Kind.values for s in Job.State.values), 0)
    for row in Job.objects.values("kind", "state").annotate(n=Count("pk")).order_by():
        counts[(row["kind"], row["state"])] = row["n"]
    return counts
