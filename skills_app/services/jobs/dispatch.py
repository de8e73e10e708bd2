"""Handing queued jobs to the broker: at most once per job, with an outbox sweep for the jobs
committed while the broker was down."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from ...infra.queue import send_job
from ...models import Job

logger = logging.getLogger(__name__)


def job_queue(kind: str) -> str:
    """The Celery queue of a job kind: executions have their own (SPEC §13)."""
    if kind == Job.Kind.EXECUTE:
        return str(settings.XMEMO_EXECUTE_QUEUE)
    return str(settings.CELERY_TASK_DEFAULT_QUEUE)


def job_dispatch(job_id: str, *, countdown: float | None = None, again: bool = False) -> bool:
    """Hand a queued job to the broker, at most once (the outbox).

    The job is claimed first (``enqueued_at`` set where it was empty; ``again`` for a job
    already handed over that must be re-sent, as the concurrency cap does), then sent; when the
    broker cannot take it (Redis down), the claim is released and the outbox sweep sends it
    once the broker is back. Answers whether it was sent.
    """
    claimable = Job.objects.filter(job_id=job_id, state=Job.State.QUEUED)
    if not again:
        claimable = claimable.filter(enqueued_at__isnull=True)
    kind = claimable.values_list("kind", flat=True).first()
    if kind is None or not claimable.update(enqueued_at=timezone.now()):
        return False
    try:
        send_job(job_id, queue=job_queue(kind), countdown=countdown)
    except Exception as exc:  # the broker's own errors (kombu OperationalError, redis, …)
        logger.warning("job %s not handed to the broker yet (%s); the sweep will", job_id, exc)
        Job.objects.filter(job_id=job_id, state=Job.State.QUEUED).update(enqueued_at=None)
        return False
    return True


def job_outbox_sweep() -> int:
    """Send every job that is still queued and was never handed to the broker (committed while
    the broker was down, or its process died between commit and send). Run periodically by
    the workers; answers how many it sent."""
    grace = timezone.now() - timedelta(seconds=settings.XMEMO_OUTBOX_GRACE_SECONDS)
    pending = Job.objects.filter(
        state=Job.State.QUEUED, enqueued_at__isnull=True, created_at__lt=grace
    ).order_by("created_at")
    return sum(job_dispatch(job_id) for job_id in pending.values_list("job_id", flat=True))
