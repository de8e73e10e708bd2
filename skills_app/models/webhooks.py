from __future__ import annotations

from django.conf import settings
from django.db import models

from skills_app.models import ids
from skills_app.models.tenancy import Workspace


class Webhook(models.Model):
    """A workspace's subscription: events of the listed types are POSTed to ``url``, signed
    with its secret (Standard Webhooks). The secret must be kept to sign, so it is stored,
    encrypted like workspace secrets (``crypto``); the API shows it once, at creation."""

    webhook_id = models.CharField(max_length=40, unique=True, default=ids.webhook_id)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=2000)
    events = models.JSONField(default=list)
    secret_ciphertext = models.TextField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.webhook_id} → {self.url}"


class WebhookDelivery(models.Model):
    """One event for one webhook. ``event_id`` is the ``webhook-id`` header: the same on every
    attempt and redelivery, so a receiver can drop duplicates."""

    class State(models.TextChoices):
        PENDING = "pending"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    delivery_id = models.CharField(max_length=40, unique=True, default=ids.delivery_id)
    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event_id = models.CharField(max_length=40)
    event_type = models.CharField(max_length=40)
    payload = models.JSONField()
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    # When the pending round was handed to the broker (the outbox mark, as on Job): a pending
    # delivery without it is handed over by the sweep (services.outbox.outbox_sweep).
    enqueued_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(
                fields=["created_at"],
                name="delivery_outbox_idx",
                condition=models.Q(state="pending", enqueued_at__isnull=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.delivery_id} ({self.event_type}, {self.state})"


class WebhookAttempt(models.Model):
    """The delivery log: one row per POST tried."""

    delivery = models.ForeignKey(
        WebhookDelivery, on_delete=models.CASCADE, related_name="attempt_log"
    )
    number = models.PositiveIntegerField()
    status_code = models.PositiveIntegerField(null=True)
    latency_ms = models.PositiveIntegerField(default=0)
    response_excerpt = models.TextField(blank=True, default="")
    error = models.CharField(max_length=500, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["number"]

    def __str__(self) -> str:
        return f"{self.delivery_id}#{self.number}: {self.status_code or self.error}"
