"""Celery tasks: thin, take ids, call the service that does the work."""

from __future__ import annotations

from celery import shared_task


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def run_job(job_id: str) -> None:
    from .services.jobs import job_run

    job_run(job_id=job_id)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def deliver_webhook(delivery_id: str, round_start: int = 0) -> None:
    """One attempt; on failure the next one is scheduled with exponential backoff."""
    from .services.webhooks import delivery_attempt

    wait = delivery_attempt(delivery_id=delivery_id, round_start=round_start)
    if wait is not None:
        deliver_webhook.apply_async((delivery_id, round_start), countdown=wait)
