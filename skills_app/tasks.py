"""Celery tasks: thin, take ids, call the service that does the work."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from celery import shared_task
from celery.signals import worker_ready

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def run_job(job_id: str) -> None:
    from .services.jobs import job_run

    job_run(job_id=job_id)


def _sweep_outbox_forever(interval: float) -> None:
    from django.db import connection

    from .services.outbox import outbox_sweep

    while True:
        try:
            outbox_sweep()
        except Exception:  # the database or broker is down: try again next round
            logger.exception("outbox sweep failed")
        finally:
            connection.close()
        time.sleep(interval)


@worker_ready.connect
def _start_outbox_sweep(**kwargs: Any) -> None:
    """Every worker sweeps the outbox at start and then periodically: jobs and webhook
    deliveries committed while the broker was down are sent once it is back. Sends are claimed
    per row, so several workers sweeping at once send each one once."""
    from django.conf import settings

    interval = float(settings.XMEMO_OUTBOX_SWEEP_SECONDS)
    if interval > 0:
        threading.Thread(
            target=_sweep_outbox_forever, args=(interval,), name="outbox-sweep", daemon=True
        ).start()


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def deliver_webhook(delivery_id: str, round_start: int = 0) -> None:
    """One attempt; on failure the next one is scheduled with exponential backoff."""
    from .services.webhooks import delivery_attempt

    wait = delivery_attempt(delivery_id=delivery_id, round_start=round_start)
    if wait is not None:
        deliver_webhook.apply_async((delivery_id, round_start), countdown=wait)
