"""Celery tasks: thin, take ids, call the service that does the work."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from celery import shared_task
from celery.signals import task_postrun, task_prerun, worker_init, worker_ready

from skills_app.infra.queue import (
    DELIVER_WEBHOOK,
    EMBED_REVISIONS,
    EVALS_REFRESH,
    OUTCOME_STORE,
    RUN_JOB,
    SCAN_REVISIONS,
)

logger = logging.getLogger(__name__)
# One JSON line as each task starts and finishes (settings.LOGGING): the job (or delivery) id it
# was given and the id of the request that enqueued it (infra/queue.py sends it as a header).
job_log = logging.getLogger("skills_app.jobs")
_started: dict[str, float] = {}
# This worker's concurrency (its slots), which the execution caps stay below.
_worker: dict[str, int | None] = {"slots": None}


@worker_init.connect
def _remember_slots(sender: Any, **kwargs: Any) -> None:
    _worker["slots"] = getattr(sender, "concurrency", None)


def _job_fields(task: Any, args: Any) -> dict[str, Any]:
    request = task.request
    return {
        "task": task.name,
        "task_id": request.id,
        "job_id": args[0] if args else None,
        "request_id": getattr(request, "request_id", None),
    }


@task_prerun.connect
def _log_start(task_id: str, task: Any, args: Any = None, **kwargs: Any) -> None:
    _started[task_id] = time.monotonic()
    job_log.info("job.start", extra={"event": "job.start", **_job_fields(task, args)})


@task_postrun.connect
def _log_finish(task_id: str, task: Any, args: Any = None, state: Any = None, **kw: Any) -> None:
    began = _started.pop(task_id, None)
    duration = None if began is None else round((time.monotonic() - began) * 1000, 3)
    job_log.info(
        "job.finish",
        extra={
            "event": "job.finish",
            "state": state,
            "duration_ms": duration,
            **_job_fields(task, args),
        },
    )


@shared_task(name=RUN_JOB, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def run_job(job_id: str) -> None:
    from skills_app.services.jobs.run import job_run

    job_run(job_id=job_id, slots=_worker["slots"])


def _sweep_forever(interval: float) -> None:
    from django.db import connection

    from skills_app.services.jobs.run import jobs_fail_stale
    from skills_app.services.outbox import outbox_sweep
    from skills_app.services.scans import scans_sweep

    while True:
        try:
            jobs_fail_stale()
            outbox_sweep()
            scans_sweep()
        except Exception:  # the database or broker is down: try again next round
            logger.exception("worker sweep failed")
        finally:
            connection.close()
        time.sleep(interval)


def _embed_forever(interval: float) -> None:
    from django.db import connection

    from skills_app.services.embeddings import SWEEP_ROUND, embeddings_sweep

    while True:
        stored = 0
        try:
            stored = embeddings_sweep()
        except Exception:  # the database is down: try again next round
            logger.exception("embedding sweep failed")
        finally:
            connection.close()
        if stored < SWEEP_ROUND:  # caught up (or another worker sweeps): wait for the next round
            time.sleep(interval)


def _usage_forever(interval: float) -> None:
    from django.db import connection

    from skills_app.services.usage import usage_flush

    while True:
        try:
            usage_flush()
        except Exception:  # Redis or the database is down: the counts wait for the next round
            logger.exception("usage flush failed")
        finally:
            connection.close()
        time.sleep(interval)


@worker_ready.connect
def _start_sweep(**kwargs: Any) -> None:
    """Every worker sweeps at start and then periodically: stale jobs are failed (what a poll
    already reads), and jobs and webhook deliveries committed while the broker was down are sent
    once it is back, and a round of revisions not yet scanned by this scanner version is
    scanned. All are conditional updates, so several workers sweeping at once act once
    per row. Current revisions still without a Level 0 vector (saved while the broker or the
    workers were down, or before the model was installed) are embedded by a thread of their
    own, so that a long catch-up never delays the outbox; one worker at a time does it. The
    usage counts the servers handed to Redis go into the database every
    ``XMEMO_USAGE_FLUSH_SECONDS`` (services/usage.py), on a thread of their own too."""
    from django.conf import settings

    usage_interval = float(settings.XMEMO_USAGE_FLUSH_SECONDS)
    if usage_interval > 0:
        threading.Thread(
            target=_usage_forever, args=(usage_interval,), name="usage-flush", daemon=True
        ).start()

    interval = float(settings.XMEMO_OUTBOX_SWEEP_SECONDS)
    if interval > 0:
        threading.Thread(
            target=_sweep_forever, args=(interval,), name="worker-sweep", daemon=True
        ).start()
        threading.Thread(
            target=_embed_forever, args=(interval,), name="embedding-sweep", daemon=True
        ).start()


@shared_task(name=EMBED_REVISIONS, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def embed_revisions(revision_ids: list[str]) -> None:
    """Level 0 vectors of these revisions, if still current and still without one."""
    from skills_app.services.embeddings import embeddings_compute

    embeddings_compute(revision_ids=revision_ids)


@shared_task(name=EVALS_REFRESH, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def evals_refresh(workspace_pk: int) -> None:
    """The workspace's trigger checks brought up to date with what it serves (§22)."""
    from skills_app.services.evals import evals_refresh as refresh

    refresh(workspace_pk=workspace_pk)


@shared_task(name=OUTCOME_STORE, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def outcome_store(report: dict[str, Any]) -> None:
    """One reported outcome, counted if it is its reporter's first of the day (§22)."""
    from skills_app.services.outcomes import outcome_store as store

    store(report=report)


@shared_task(name=SCAN_REVISIONS, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def scan_revisions(revision_ids: list[str]) -> None:
    """The scan of these revisions (docs/scanning.md), unless this scanner version did it."""
    from skills_app.services.scans import scans_compute

    scans_compute(revision_ids=revision_ids)


@shared_task(name=DELIVER_WEBHOOK, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def deliver_webhook(delivery_id: str, round_start: int = 0) -> None:
    """One attempt; on failure the next one is scheduled with exponential backoff."""
    from skills_app.services.webhooks import delivery_attempt

    wait = delivery_attempt(delivery_id=delivery_id, round_start=round_start)
    if wait is not None:
        deliver_webhook.apply_async((delivery_id, round_start), countdown=wait)
