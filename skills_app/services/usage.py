"""The workers' usage flush (docs/contract.md §19): what the servers counted and handed to
Redis (``infra/usage.py``) goes into the daily rows, in one transaction.

Telemetry, not a change anyone made: no actor, no audit entry, no tenant check (the counts
were taken by recalls that passed theirs).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction

from skills_app.infra import usage

logger = logging.getLogger(__name__)


def usage_flush() -> int:
    """Move the counts Redis holds into the database; answers how many rows were written. If
    the database refuses them, they go back to Redis for the next flush."""
    if not settings.REDIS_URL:
        return 0  # the servers store their own counts (infra/usage.py)
    counts = usage.pop()
    if not counts:
        return 0
    try:
        with transaction.atomic():
            return usage.store(counts)
    except Exception:
        usage.push(counts)
        raise
