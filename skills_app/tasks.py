"""Celery tasks: thin, take ids, call the service that does the work."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from celery import shared_task
from celery.signals import task_postrun, task_prerun, worker_init

from skills_app.infra.queue import (
    DELIVER_WEBHOOK,
    EMBED_REVISIONS,
    EVALS_REFRESH,
    OUTCOME_STORE,
    RUN_JOB,
    SCAN_REVISIONS,
)

if TYPE_CHECKING:
    from skills_app.services.outcomes import OutcomeMessage

# One JSON line as each task starts and finishes (settings.LOGGING): the job (or delivery) id it
# was given and the id of the request that enqueued it (infra/queue.py sends it as a header).
# Periodic work (no id: the beat entries below) logs at debug, or its lines every few seconds
# would bury the jobs' (and fill `make run`'s terminal).
job_log = logging.getLogger("skills_app.jobs")
_started: dict[str, float] = {}
# This worker's concurrency (its slots), which the execution caps stay below.
_worker: dict[str, int | None] = {"slots": None}


@worker_init.connect
def _remember_slots(sender: Any, **kwargs: Any) -> None:
    _worker["slots"] = getattr(sender, "concurrency", None)


def _level(args: Any) -> int:
    return logging.INFO if args else logging.DEBUG


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
    job_log.log(_level(args), "job.start", extra={"event": "job.start", **_job_fields(task, args)})


@task_postrun.connect
def _log_finish(task_id: str, task: Any, args: Any = None, state: Any = None, **kw: Any) -> None:
    began = _started.pop(task_id, None)
    duration = None if began is None else round((time.monotonic() - began) * 1000, 3)
    job_log.log(
        _level(args),
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


# --- Periodic work: the entries of settings.CELERY_BEAT_SCHEDULE ------------------------------
# Sent by `celery beat` in production, run in the server process by `make run` (xmemo/run.py).
# Each is idempotent (conditional updates, claims, advisory locks), so two runs at once or a
# run repeated after a lost message act once per row.


@shared_task(ignore_result=True)
def fail_stale_jobs() -> int:
    """Fail the jobs that already read as failed: their worker vanished, or none took them."""
    from skills_app.services.jobs.run import jobs_fail_stale

    return jobs_fail_stale()


@shared_task(ignore_result=True)
def sweep_outbox() -> int:
    """Send the jobs and webhook deliveries committed while the broker could not take them."""
    from skills_app.services.outbox import outbox_sweep

    return outbox_sweep()


@shared_task(ignore_result=True)
def sweep_scans() -> int:
    """Scan a round of revisions unscanned, or scanned by another scanner version (§21)."""
    from skills_app.services.scans import scans_sweep

    return scans_sweep()


@shared_task(ignore_result=True)
def catch_up_evals() -> int:
    """Bring up to date the trigger checks of every workspace with one out of date (§22)."""
    from skills_app.services.evals import evals_catch_up

    return evals_catch_up()


@shared_task(ignore_result=True)
def sweep_embeddings() -> int:
    """Embed current revisions still without a Level 0 vector, for at most one interval."""
    from django.conf import settings

    from skills_app.services.embeddings import embeddings_sweep

    return embeddings_sweep(budget_seconds=float(settings.XMEMO_OUTBOX_SWEEP_SECONDS))


@shared_task(ignore_result=True)
def flush_usage() -> int:
    """Move the usage counts the servers took into the database (docs/contract.md §19)."""
    from skills_app.services.usage import usage_flush

    return usage_flush()


@shared_task(ignore_result=True)
def expire_oauth_clients() -> int:
    """Delete the OAuth clients registered and never used."""
    from skills_app.services.oauth import oauth_clients_expire

    return oauth_clients_expire()


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
def outcome_store(report: OutcomeMessage) -> None:
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
