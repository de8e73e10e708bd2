"""Usage counts of the test process, flushed the way servers and workers do it in production."""

from __future__ import annotations

from skills_app.infra import usage
from skills_app.services.usage import usage_flush


def flush_usage() -> None:
    """This process's counts out (to Redis where configured, else to the database), then what
    Redis holds into the database, as a worker's flush does."""
    usage.flush()
    usage_flush()
