"""Celery tasks: thin, take ids, call the service that does the work."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from celery import shared_task
from celery.signals import worker_ready

from .infra.queue import RUN_JOB

logger = logging.getLogger(__name__)


@shared_task(name=RUN_JOB, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def run_job(job_id: str) -> None:
    from .services.jobs.run import job_run

    job_run(job_id=job_id)


def _sweep_forever(interval: float) -> None:
    from django.db import connection

    from .services.jobs.dispatch import job_outbox_sweep
    from .services.jobs.run import jobs_fail_stale

    while True:
        try:
            jobs_fail_stale()
            job_outbox_sweep()
        except Exception:  # the database or broker is down: try again next round
            logger.exception("job sweep failed")
        finally:
            connection.close()
        time.sleep(interval)


@worker_ready.connect
def _start_sweep(**kwargs: Any) -> None:
    """Every worker sweeps the jobs at start and then periodically: stale jobs are failed (what
    a poll already reads), and jobs committed while the broker was down are sent once it is
    back. Both are conditional updates, so several workers sweeping at once act once per job."""
    from django.conf import settings

    interval = float(settings.XMEMO_OUTBOX_SWEEP_SECONDS)
    if interval > 0:
        threading.Thread(
            target=_sweep_forever, args=(interval,), name="job-sweep", daemon=True
        ).start()
