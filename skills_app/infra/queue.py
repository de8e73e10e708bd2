"""Hand work to Celery by task name, so that the services never import ``tasks`` (the worker
door) and the worker door can import the services freely.

The task is looked up in the application's registry rather than sent with ``send_task``: a
registered task honours ``CELERY_TASK_ALWAYS_EAGER``, which the embedded default (no Redis)
relies on to run jobs in-process.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from celery import current_app
from kombu.exceptions import ChannelError

from skills_app.infra import requestctx

RUN_JOB = "skills_app.tasks.run_job"
DELIVER_WEBHOOK = "skills_app.tasks.deliver_webhook"
EMBED_REVISIONS = "skills_app.tasks.embed_revisions"
EVALS_REFRESH = "skills_app.tasks.evals_refresh"
OUTCOME_STORE = "skills_app.tasks.outcome_store"
SCAN_REVISIONS = "skills_app.tasks.scan_revisions"

logger = logging.getLogger(__name__)
# A send to an unreachable broker costs a connection attempt (0.6 s refused, seconds where
# packets drop) that a request must not wait for each time: after one hand-over of a task fails,
# this process sends none of it for this long and leaves the work to that task's periodic sweep.
HANDOVER_PAUSE_SECONDS = 10.0
_paused_until: dict[str, float] = {}


def _task(name: str) -> Any:
    app = current_app
    if name not in app.tasks:
        # A web process never ran the worker's start-up imports: import the task modules the
        # way the worker does (Celery's autodiscovery of every installed app's ``tasks``).
        app.loader.import_default_modules()
    return app.tasks[name]


def send_task(name: str, *, args: list[Any], **options: Any) -> None:
    """Send one task message to the broker (or run it now when tasks run eagerly). Raises the
    broker's own error when it cannot take the message."""
    # The request that enqueues it (if any) travels with it: the worker logs it (tasks.py).
    rid = requestctx.request_id()
    if rid is not None:
        options["headers"] = {**options.get("headers", {}), "request_id": rid}
    _task(name).apply_async(args=args, **options)


def send_job(job_id: str, *, queue: str, countdown: float | None = None) -> None:
    send_task(RUN_JOB, args=[job_id], queue=queue, countdown=countdown)


def tasks_run_eagerly() -> bool:
    """Whether tasks run in the calling process (the embedded default) rather than on workers."""
    return bool(current_app.conf.task_always_eager)


def queue_depth(name: str) -> int:
    """Messages waiting on the broker queue ``name`` (every priority of it); 0 for a queue no
    worker has declared yet; the broker's own error when it cannot be asked."""
    with current_app.connection_for_read() as conn:
        try:
            declared = conn.default_channel.queue_declare(queue=name, passive=True)
        except ChannelError:  # NOT_FOUND: nothing was ever sent to it, nobody serves it yet
            return 0
        return int(declared.message_count)


def hand_over(name: str, ids: list[str], *, batch: int, **options: Any) -> bool:
    """After a commit: send ``ids`` to task ``name``, ``batch`` a message, without publish
    retries (a periodic sweep is the retry). Never raises; answers whether all were sent. After
    a failure, sends nothing of ``name`` for ``HANDOVER_PAUSE_SECONDS``."""
    if time.monotonic() < _paused_until.get(name, 0.0):
        return False
    try:
        for start in range(0, len(ids), batch):
            send_task(name, args=[ids[start : start + batch]], retry=False, **options)
    except Exception as exc:  # the broker's own errors (kombu OperationalError, redis, …)
        _paused_until[name] = time.monotonic() + HANDOVER_PAUSE_SECONDS
        logger.warning("%d id(s) not handed to %s (%s); its sweep will", len(ids), name, exc)
        return False
    return True
