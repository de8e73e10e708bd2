"""Reads of webhooks and their delivery log (owners and admins of the workspace)."""

from __future__ import annotations

from typing import Any

from .. import errors
from ..access import ADMIN_ROLES, Actor, require_role, require_scope
from ..models import Webhook, WebhookDelivery, Workspace
from .pagination import Page, paginate


def _admin(actor: Actor, workspace: Workspace) -> None:
    require_scope(actor, "workspace:admin")
    require_role(actor, workspace, ADMIN_ROLES)


def webhook_as_dict(webhook: Webhook) -> dict[str, Any]:
    return {
        "id": webhook.webhook_id,
        "url": webhook.url,
        "events": list(webhook.events),
        "created_at": webhook.created_at.isoformat(),
    }


def delivery_as_dict(delivery: WebhookDelivery) -> dict[str, Any]:
    return {
        "id": delivery.delivery_id,
        "event_id": delivery.event_id,
        "type": delivery.event_type,
        "state": delivery.state,
        "created_at": delivery.created_at.isoformat(),
        "attempts": [
            {
                "number": a.number,
                "status_code": a.status_code,
                "latency_ms": a.latency_ms,
                "response_excerpt": a.response_excerpt,
                "error": a.error,
                "at": a.created_at.isoformat(),
            }
            for a in delivery.attempt_log.all()
        ],
    }


def webhook_list(
    *, actor: Actor, workspace: Workspace, cursor: str | None = None, limit: int = 50
) -> Page:
    _admin(actor, workspace)
    return paginate(
        Webhook.objects.filter(workspace=workspace),
        kind=f"webhooks:{workspace.slug}",
        order=[("created_at", True), ("id", True)],
        cursor=cursor,
        limit=limit,
        serialize=webhook_as_dict,
    )


def webhook_for(*, actor: Actor, workspace: Workspace, webhook_id: str) -> Webhook:
    _admin(actor, workspace)
    webhook = Webhook.objects.filter(workspace=workspace, webhook_id=webhook_id).first()
    if webhook is None:
        raise errors.NotFound("Webhook not found.", details={"id": webhook_id})
    return webhook


def delivery_list(
    *, actor: Actor, webhook: Webhook, cursor: str | None = None, limit: int = 50
) -> Page:
    _admin(actor, webhook.workspace)
    return paginate(
        WebhookDelivery.objects.filter(webhook=webhook).prefetch_related("attempt_log"),
        kind=f"deliveries:{webhook.webhook_id}",
        order=[("created_at", True), ("id", True)],
        cursor=cursor,
        limit=limit,
        serialize=delivery_as_dict,
    )


def delivery_for(*, actor: Actor, webhook: Webhook, delivery_id: str) -> WebhookDelivery:
    _admin(actor, webhook.workspace)
    delivery = (
        WebhookDelivery.objects.select_related("webhook__workspace")
        .filter(webhook=webhook, delivery_id=delivery_id)
        .first()
    )
    if delivery is None:
        raise errors.NotFound("Delivery not found.", details={"id": delivery_id})
    return delivery
