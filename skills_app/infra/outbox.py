"""The outbox's claim-and-send: work committed to the database (a job, a webhook delivery) reaches
the broker at most once per claim, and none is lost while the broker is down.

A row is claimed first (``enqueued_at`` set where it was empty), then sent; when the broker
cannot take it (Redis down), the claim is released and the sweep (``services.outbox``) sends it
later. Claims are atomic updates, so several workers sweeping at once send each row once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outbox:
    """One kind of row sent through the outbox: ``waiting()`` are the rows still to be sent
    (claimed or not), ``key`` their public id field, ``dispatch(key)`` sends one."""

    waiting: Callable[[], QuerySet[Any]]
    key: str
    dispatch: Callable[[str], bool]


def outbox_send(
    rows: QuerySet[Any], send: Callable[[], object], *, label: str, again: bool = False
) -> bool:
    """Claim the row in ``rows`` (still waiting) and ``send`` it; ``again`` re-sends a row
    already handed over. Answers whether it was sent."""
    claimable = rows if again else rows.filter(enqueued_at__isnull=True)
    if not claimable.update(enqueued_at=timezone.now()):
        return False
    try:
        send()
    except Exception as exc:  # the broker's own errors (kombu OperationalError, redis, …)
        logger.warning("%s not handed to the broker yet (%s); the sweep will", label, exc)
        rows.update(enqueued_at=None)
        return False
    return True
