"""Reads of webhooks and their delivery log (owners and admins of the workspace), as objects:
the JSON shapes are ``gateway.shapes``'s."""

from __future__ import annotations

from skills_app.access import Actor, require_workspace_admin
from skills_app.models import Webhook, WebhookDelivery, Workspace
from skills_app.selectors.pagination import Rows, paginate_rows


def webhook_list(
    *, actor: Actor, workspace: Workspace, cursor: str | None = None, limit: int = 50
) -> Rows[Webhook]:
    require_workspace_admin(actor, workspace)
    return paginate_rows(
        Webhook.objects.filter(workspace=workspace),
        kind=f"webhooks:{workspace.slug}",
        order=[("created_at", True), ("id", True)],
        cursor=cursor,
        limit=limit,
    )


def webhook_rows(*, actor: Actor, workspace: Workspace) -> list[Webhook]:
    """Every webhook of ``workspace``, newest first (the console's webhooks page)."""
    require_workspace_admin(actor, workspace)
    return list(Webhook.objects.filter(workspace=workspace).order_by("-created_at", "-id"))


def delivery_list(
    *, actor: Actor, webhook: Webhook, cursor: str | None = None, limit: int = 50
) -> Rows[WebhookDelivery]:
    """The delivery log, newest first, each delivery with its attempts."""
    require_workspace_admin(actor, webhook.workspace)
    return paginate_rows(
        WebhookDelivery.objects.filter(webhook=webhook).prefetch_related("attempt_log"),
        kind=f"deliveries:{webhook.webhook_id}",
        order=[("created_at", True), ("id", True)],
        cursor=cursor,
        limit=limit,
    )


def delivery_rows(*, actor: Actor, webhook: Webhook, limit: int) -> list[WebhookDelivery]:
    """The ``limit`` newest deliveries of ``webhook`` with their attempts (the console's log)."""
    require_workspace_admin(actor, webhook.workspace)
    return list(
        WebhookDelivery.objects.filter(webhook=webhook)
        .order_by("-created_at", "-id")
        .prefetch_related("attempt_log")[:limit]
    )
