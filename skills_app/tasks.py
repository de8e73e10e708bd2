"""Celery tasks: thin, take ids, call the service that does the work."""

from __future__ import annotations

from celery import shared_task


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def run_job(job_id: str) -> None:
    from .services.jobs import job_run

    job_run(job_id=job_id)
