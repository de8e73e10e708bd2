"""Handing queued jobs to the broker through the outbox (``infra.outbox``): at most once per
claim, and swept again when they were committed while the broker was down."""

from __future__ import annotations

from django.conf import settings

from skills_app.infra.outbox import Outbox, outbox_send
from skills_app.infra.queue import send_job
from skills_app.models import Job


def job_queue(kind: str) -> str:
    """The Celery queue of a job kind: executions have their own (docs/contract.md §13)."""
    if kind == Job.Kind.EXECUTE:
        return str(settings.XMEMO_EXECUTE_QUEUE)
    return str(settings.CELERY_TASK_DEFAULT_QUEUE)


def job_dispatch(job_id: str, *, countdown: float | None = None, again: bool = False) -> bool:
    """Hand a queued job to the broker through the outbox (``again`` for a job already handed
    over that must be re-sent, as the concurrency cap does). Answers whether it was sent."""
    rows = Job.objects.filter(job_id=job_id, state=Job.State.QUEUED)
    kind = rows.values_list("kind", flat=True).first()
    if kind is None:
        return False
    return outbox_send(
        rows,
        lambda: send_job(job_id, queue=job_queue(kind), countdown=countdown),
        label=f"job {job_id}",
        again=again,
    )


JOB_OUTBOX = Outbox(
    waiting=lambda: Job.objects.filter(state=Job.State.QUEUED), key="job_id", dispatch=job_dispatch
)
