"""The outbox: work committed to the database (a job, a webhook delivery) reaches the broker at
most once per claim, and none is lost while the broker is down.

A row is claimed first (``enqueued_at`` set where it was empty), then sent; when the broker
cannot take it (Redis down), the claim is released. Every worker runs ``outbox_sweep``
periodically (``tasks``): it sends what is still waiting, unclaimed, past a grace
(``XMEMO_OUTBOX_GRACE_SECONDS``, so the commit's own send goes first). Claims are atomic
updates, so several workers sweeping at once send each row once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
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


def outbox_sweep() -> int:
    """Send every job and delivery still waiting that was never handed to the broker
    (committed while the broker was down, or its process died between commit and send).
    Answers how many it sent."""
    # The outboxes are built on this module, so they are imported here, not above.
    from .events import DELIVERY_OUTBOX
    from .jobs.dispatch import JOB_OUTBOX

    grace = timezone.now() - timedelta(seconds=settings.XMEMO_OUTBOX_GRACE_SECONDS)
    sent = 0
    for box in (JOB_OUTBOX, DELIVERY_OUTBOX):
        pending = (
            box.waiting()
            .filter(enqueued_at__isnull=True, created_at__lt=grace)
            .order_by("created_at")
        )
        sent += sum(box.dispatch(key) for key in pending.values_list(box.key, flat=True))
    return sent


def outbox_backlog() -> dict[str, int]:
    """How many jobs and webhook deliveries wait to be handed to the broker (metrics)."""
    from .events import DELIVERY_OUTBOX
    from .jobs.dispatch import JOB_OUTBOX

    boxes = {"jobs": JOB_OUTBOX, "webhooks": DELIVERY_OUTBOX}
    return {
        name: box.waiting().filter(enqueued_at__isnull=True).count() for name, box in boxes.items()
    }
