"""Webhooks of a workspace and their delivery log (docs/contract.md §7, §16)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from skills_app.access import delivery_for, webhook_for, workspace_for
from skills_app.api.serializers import (
    WebhookCreatedOut,
    WebhookDeliveryOut,
    WebhookIn,
    WebhookOut,
    page_of,
)
from skills_app.api.views.base import ApiView, page_response
from skills_app.api.views.skills import PAGE_PARAMS
from skills_app.gateway.shapes import delivery_as_dict, webhook_as_dict
from skills_app.models import Webhook
from skills_app.selectors.webhooks import delivery_list, webhook_list
from skills_app.services.webhooks import delivery_redeliver, webhook_create, webhook_delete


class _WebhookView(ApiView):
    def webhook(self, ws: str, webhook_id: str) -> Webhook:
        actor = self.actor
        workspace = workspace_for(actor, ws, require_enabled=False)
        return webhook_for(actor=actor, workspace=workspace, webhook_id=webhook_id)


class WebhookListView(ApiView):
    @extend_schema(
        operation_id="workspaces_webhooks_list",
        parameters=PAGE_PARAMS,
        responses={200: page_of("WebhookPage", WebhookOut())},
        tags=["webhooks"],
    )
    def get(self, request: Request, ws: str) -> Response:
        actor = self.actor
        return page_response(
            webhook_list(
                actor=actor,
                workspace=workspace_for(actor, ws, require_enabled=False),
                cursor=self.param("cursor"),
                limit=self.limit(),
            ).page(webhook_as_dict)
        )

    @extend_schema(
        operation_id="workspaces_webhooks_create",
        summary="Subscribe a URL to events; the signing secret is in this answer only",
        request=WebhookIn,
        responses={201: WebhookCreatedOut},
        tags=["webhooks"],
    )
    def post(self, request: Request, ws: str) -> Response:
        data = self.validated(WebhookIn)
        actor = self.actor
        webhook, secret = webhook_create(
            actor=actor,
            workspace=workspace_for(actor, ws, require_enabled=False),
            url=data["url"],
            events=data["events"],
        )
        return Response({**webhook_as_dict(webhook), "secret": secret}, status=201)


class WebhookDetailView(_WebhookView):
    @extend_schema(
        operation_id="workspaces_webhooks_destroy", responses={204: None}, tags=["webhooks"]
    )
    def delete(self, request: Request, ws: str, webhook_id: str) -> Response:
        webhook_delete(actor=self.actor, webhook=self.webhook(ws, webhook_id))
        return Response(status=204)


class DeliveryListView(_WebhookView):
    @extend_schema(
        operation_id="workspaces_webhooks_deliveries_list",
        summary="The delivery log, newest first, with every attempt",
        parameters=PAGE_PARAMS,
        responses={200: page_of("WebhookDeliveryPage", WebhookDeliveryOut())},
        tags=["webhooks"],
    )
    def get(self, request: Request, ws: str, webhook_id: str) -> Response:
        return page_response(
            delivery_list(
                actor=self.actor,
                webhook=self.webhook(ws, webhook_id),
                cursor=self.param("cursor"),
                limit=self.limit(),
            ).page(delivery_as_dict)
        )


class RedeliverView(_WebhookView):
    @extend_schema(
        operation_id="workspaces_webhooks_deliveries_redeliver",
        request=None,
        responses={202: WebhookDeliveryOut},
        tags=["webhooks"],
    )
    def post(self, request: Request, ws: str, webhook_id: str, delivery_id: str) -> Response:
        actor = self.actor
        delivery = delivery_for(
            actor=actor, webhook=self.webhook(ws, webhook_id), delivery_id=delivery_id
        )
        return Response(
            delivery_as_dict(delivery_redeliver(actor=actor, delivery=delivery)), status=202
        )
