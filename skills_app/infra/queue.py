"""Hand work to Celery by task name, so that the services never import ``tasks`` (the worker
door) and the worker door can import the services freely.

The task is looked up in the application's registry rather than sent with ``send_task``: a
registered task honours ``CELERY_TASK_ALWAYS_EAGER``, which the embedded default (no Redis)
relies on to run jobs in-process.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
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
# A send to an unreachable broker costs connection attempts (Celery's connection retries for up
# to broker_connection_timeout: 6 s measured after a connection dropped) that a request must not
# wait for: hand-overs go through a connection of their own that tries once, and after one fails
# this process hands nothing over for this long, leaving the work to the periodic sweeps.
HANDOVER_PAUSE_SECONDS = 10.0
_paused_until = 0.0
_handover_connections: dict[int, Any] = {}


def _handover_connection() -> Any:
    """This process's broker connection for hand-overs: one connection attempt, no waiting."""
    pid = os.getpid()
    if pid not in _handover_connections:
        once = {"max_retries": 1, "interval_start": 0, "interval_step": 0, "interval_max": 0}
        options = {**current_app.conf.broker_transport_options, **once}
        _handover_connections[pid] = current_app.connection_for_write(transport_options=options)
    return _handover_connections[pid]


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


def hand_over(name: str, messages: Sequence[list[Any]], **options: Any) -> bool:
    """After a commit: send one message of task ``name`` per args list of ``messages``, without
    publish retries (a periodic sweep is the retry). Never raises; answers whether all were
    sent. After a failure, hands nothing over for ``HANDOVER_PAUSE_SECONDS``."""
    global _paused_until
    if time.monotonic() < _paused_until:
        return False
    try:
        for args in messages:
            send_task(name, args=args, retry=False, connection=_handover_connection(), **options)
    except Exception as exc:  # the broker's own errors (kombu OperationalError, redis, …)
        _paused_until = time.monotonic() + HANDOVER_PAUSE_SECONDS
        logger.warning(
            "%d message(s) of %s not sent (%s); its sweep will", len(messages), name, exc
        )
        return False
    return True
