"""The outbox sweep: ``outbox_sweep``, the periodic job ``sweep_outbox`` (``tasks``), sends what
is still waiting, unclaimed, past a grace (``XMEMO_OUTBOX_GRACE_SECONDS``, so the commit's own
send goes first): jobs committed while the broker was down, or whose process died between commit
and send, and webhook deliveries alike. The claim-and-send each outbox uses is
``infra.outbox``; the outboxes are ``JOB_OUTBOX`` (``jobs.dispatch``) and ``DELIVERY_OUTBOX``
(``events``).
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from skills_app.services.events import DELIVERY_OUTBOX
from skills_app.services.jobs.dispatch import JOB_OUTBOX

OUTBOXES = {"jobs": JOB_OUTBOX, "webhooks": DELIVERY_OUTBOX}


def outbox_sweep() -> int:
    """Send every job and delivery still waiting that was never handed to the broker
    (committed while the broker was down, or its process died between commit and send).
    Answers how many it sent."""
    grace = timezone.now() - timedelta(seconds=settings.XMEMO_OUTBOX_GRACE_SECONDS)
    sent = 0
    for box in OUTBOXES.values():
        pending = (
            box.waiting()
            .filter(enqueued_at__isnull=True, created_at__lt=grace)
            .order_by("created_at")
        )
        sent += sum(box.dispatch(key) for key in pending.values_list(box.key, flat=True))
    return sent


def outbox_backlog() -> dict[str, int]:
    """How many jobs and webhook deliveries wait to be handed to the broker (metrics)."""
    return {
        name: box.waiting().filter(enqueued_at__isnull=True).count()
        for name, box in OUTBOXES.items()
    }
