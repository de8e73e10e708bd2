"""Jobs are sent by task name: the name is the worker's registered task, found from any process."""

from __future__ import annotations

from skills_app.infra import queue
from xmemo.celery import app


def test_the_job_task_is_found_by_name_in_the_celery_registry() -> None:
    task = queue._task(queue.RUN_JOB)
    assert queue.RUN_JOB in app.tasks
    assert task is app.tasks[queue.RUN_JOB]
    assert task.acks_late is True
