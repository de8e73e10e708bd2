"""Reads of webhooks and their delivery log (owners and admins of the workspace)."""

from __future__ import annotations

from typing import Any

from ..access import Actor, require_workspace_admin
from ..models import Webhook, WebhookDelivery, Workspace
from .pagination import Page, paginate


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
    require_workspace_admin(actor, workspace)
    return paginate(
        Webhook.objects.filter(workspace=workspace),
        kind=f"webhooks:{workspace.slug}",
        order=[("created_at", True), ("id", True)],
        cursor=cursor,
        limit=limit,
        serialize=webhook_as_dict,
    )


def webhook_rows(*, actor: Actor, workspace: Workspace) -> list[Webhook]:
    """Every webhook of ``workspace``, newest first (the console's webhooks page)."""
    require_workspace_admin(actor, workspace)
    return list(Webhook.objects.filter(workspace=workspace).order_by("-created_at", "-id"))


def delivery_list(
    *, actor: Actor, webhook: Webhook, cursor: str | None = None, limit: int = 50
) -> Page:
    require_workspace_admin(actor, webhook.workspace)
    return paginate(
        WebhookDelivery.objects.filter(webhook=webhook).prefetch_related("attempt_log"),
        kind=f"deliveries:{webhook.webhook_id}",
        order=[("created_at", True), ("id", True)],
        cursor=cursor,
        limit=limit,
        serialize=delivery_as_dict,
    )


def delivery_rows(*, actor: Actor, webhook: Webhook, limit: int) -> list[WebhookDelivery]:
    """The ``limit`` newest deliveries of ``webhook`` with their attempts (the console's log)."""
    require_workspace_admin(actor, webhook.workspace)
    return list(
        WebhookDelivery.objects.filter(webhook=webhook)
        .order_by("-created_at", "-id")
        .prefetch_related("attempt_log")[:limit]
    )
