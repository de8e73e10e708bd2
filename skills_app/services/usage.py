"""The periodic usage flush (docs/contract.md §19; a beat entry of settings.CELERY_BEAT_SCHEDULE):
what the servers counted into Redis (``infra/usage.py``) goes into the daily rows, in one
transaction; without Redis, what this process counted in memory (the embedded default's server,
where ``make run`` runs the schedule).

Telemetry, not a change anyone made: no actor, no audit entry, no tenant check (the counts
were taken by recalls that passed theirs).
"""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from skills_app.infra import usage


def usage_flush() -> int:
    """Store the counts taken so far; answers how many rows were written. Idempotent: Redis
    hands each count to one flush (``usage.pop``), and counts the database refuses go back for
    the next flush."""
    if not settings.REDIS_URL:
        return usage.flush()  # this process's own counts, straight into the database
    usage.flush()  # any this process still holds (Redis was down when they were taken)
    counts = usage.pop()
    if not counts:
        return 0
    try:
        with transaction.atomic():
            return usage.store(counts)
    except Exception:
        usage.push(counts)
        raise
