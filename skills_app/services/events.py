"""Product events for webhooks (docs/contract.md §16), derived from the audit entries the services
write.

``audit_record`` hands every entry to ``emit_from_audit``: the audit trail already names each
change once, in its transaction, so events need no second set of call sites. An event becomes
one ``WebhookDelivery`` per subscribed webhook, in the same transaction (a rolled-back change
announces nothing), and the deliveries are sent through the outbox after commit: one the broker
could not take is sent by the periodic outbox sweep once it is back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.utils import timezone

from skills_app.infra.outbox import Outbox, outbox_send
from skills_app.infra.queue import DELIVER_WEBHOOK, send_task
from skills_app.models import AuditEntry, SkillRevision, Webhook, WebhookDelivery, Workspace, ids

EVENT_TYPES = (
    "revision.proposed",
    "revision.published",
    "revision.rejected",
    "revision.deprecated",
    "revision.scanned",
    "revision.evaluated",
    "skill.archived",
    "label.moved",
    "import.finished",
    "export.finished",
)
_BY_ACTION = {
    "skills.revision.reject": "revision.rejected",
    "skills.revision.deprecate": "revision.deprecated",
    "skills.revision.scan": "revision.scanned",
    "skills.skill.archive": "skill.archived",
    "skills.label.move": "label.moved",
    "skills.label.delete": "label.moved",
    "jobs.import.finish": "import.finished",
    "jobs.export.finish": "export.finished",
}
_BY_NEW_STATE = {"proposed": "revision.proposed", "published": "revision.published"}


def event_type_of(entry: AuditEntry) -> str | None:
    """The event an audit entry announces, if any."""
    if entry.action in _BY_ACTION:
        return _BY_ACTION[entry.action]
    if entry.action.startswith("skills.revision."):
        if "to" in entry.data and entry.data["to"] == entry.data.get("from"):
            return None  # an approval still short of the required count moved nothing
        # A save lands in a state ("state"), a transition moves to one ("to").
        return _BY_NEW_STATE.get(str(entry.data.get("to", entry.data.get("state", ""))))
    return None


def _event_data(entry: AuditEntry) -> dict[str, Any]:
    """An event's ``data``: the audit entry's own keys (kept for receivers that read them) and,
    for every revision event, which skill and revision moved and where it is now — read from the
    revision, so a save, a review decision and a superseded publication say it alike."""
    data: dict[str, Any] = {
        f"{entry.target_type}_id": entry.target_id,
        **entry.data,
        "actor": entry.actor_label,
    }
    if entry.target_type == "revision":
        revision = (
            SkillRevision.objects.select_related("skill")
            .only("revision_id", "revision_number", "state", "skill__skill_id", "skill__slug")
            .get(revision_id=entry.target_id)
        )
        data.update(
            skill_id=revision.skill.skill_id,
            slug=revision.skill.slug,
            revision_id=revision.revision_id,
            revision_number=revision.revision_number,
            state=revision.state,
        )
    return data


def emit_from_audit(entry: AuditEntry) -> None:
    event_type = event_type_of(entry)
    if event_type is None:
        return
    event_emit(workspace=entry.workspace, event_type=event_type, data=lambda: _event_data(entry))


def event_emit(
    *, workspace: Workspace, event_type: str, data: Callable[[], dict[str, Any]]
) -> None:
    """One event to every webhook of ``workspace`` subscribed to it (``data`` is built only
    when one is), delivered after commit. An event no audit entry names (``revision.evaluated``,
    docs/contract.md §22) is sent from here directly."""
    webhooks = [w for w in Webhook.objects.filter(workspace=workspace) if event_type in w.events]
    if not webhooks:
        return
    event_id = ids.event_id()
    payload: dict[str, Any] = {
        "id": event_id,
        "type": event_type,
        "created_at": timezone.now().isoformat(),
        "workspace": workspace.slug,
        "data": data(),
    }
    deliveries = WebhookDelivery.objects.bulk_create(
        WebhookDelivery(webhook=w, event_id=event_id, event_type=event_type, payload=payload)
        for w in webhooks
    )
    for delivery in deliveries:
        delivery_enqueue_after_commit(delivery.delivery_id)


def delivery_dispatch(delivery_id: str) -> bool:
    """Hand a pending delivery to the broker through the outbox (the task is looked up by name:
    the core does not import the worker). Answers whether it was sent.

    Until it is sent no attempt of its round can have run, so the attempts logged so far are
    where the round starts (a redelivery gets a fresh round of XMEMO_WEBHOOK_MAX_ATTEMPTS)."""
    rows = WebhookDelivery.objects.filter(
        delivery_id=delivery_id, state=WebhookDelivery.State.PENDING
    )
    round_start = rows.values_list("attempts", flat=True).first()
    if round_start is None:
        return False
    return outbox_send(
        rows,
        lambda: send_task(DELIVER_WEBHOOK, args=[delivery_id, round_start]),
        label=f"webhook delivery {delivery_id}",
    )


DELIVERY_OUTBOX = Outbox(
    waiting=lambda: WebhookDelivery.objects.filter(state=WebhookDelivery.State.PENDING),
    key="delivery_id",
    dispatch=delivery_dispatch,
)


def delivery_enqueue_after_commit(delivery_id: str) -> None:
    transaction.on_commit(lambda: delivery_dispatch(delivery_id))
