"""Usage counts of the test process, flushed the way production does it."""

from __future__ import annotations

from skills_app.tasks import flush_usage as flush_task
from tests.support import run_task


def flush_usage() -> int:
    """The periodic flush (the beat entry's task, as a worker runs it), now: this process's
    counts (those Redis could not take, or all of them without Redis) and what Redis holds go
    into the database. Answers how many rows it wrote."""
    return int(run_task(flush_task))
