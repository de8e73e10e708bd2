"""Webhooks and their logged deliveries (docs/contract.md §16b)."""

from typing import Annotated, TypedDict

from skills_app.domain.shapes.fields import DateTime, Doc, OneOf

DELIVERY_STATES = ("pending", "succeeded", "failed")


class Webhook(TypedDict):
    id: str
    url: str
    events: list[str]
    created_at: DateTime


class WebhookCreated(Webhook):
    secret: Annotated[str, Doc("The signing secret. Shown only in this answer.")]


class WebhookAttempt(TypedDict):
    number: int
    status_code: int | None
    latency_ms: int
    response_excerpt: str
    error: str
    at: DateTime


class WebhookDelivery(TypedDict):
    """A logged delivery with every attempt."""

    id: str
    event_id: str
    type: str
    state: Annotated[str, OneOf(DELIVERY_STATES)]
    created_at: DateTime
    attempts: list[WebhookAttempt]
