"""The read side of jobs: one job as the API answers it (SPEC §7)."""

from __future__ import annotations

from typing import Any

from ..access import Actor, job_for, require_scope
from ..models import Job
from ..services.jobs import job_fail_stale


def job_get(*, actor: Actor, job_id: str) -> Job:
    """A job of a workspace the actor may read; a job whose worker vanished reads as failed."""
    require_scope(actor, "skills:read")
    return job_fail_stale(job_for(actor, job_id))


def job_as_dict(job: Job) -> dict[str, Any]:
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
    from .. import errors

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
