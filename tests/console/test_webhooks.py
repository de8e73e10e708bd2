"""Webhooks in the console (Django's test client): add (secret once), refuse, log, redeliver,
delete — admins and owners only."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from skills_app.infra.crypto import secret_open
from skills_app.models import AuditEntry, Webhook, WebhookAttempt
from tests.factories import Env, make_webhook

pytestmark = pytest.mark.django_db


def test_admin_adds_a_webhook_and_sees_its_secret_once(
    env: Env, owner_client: Client, member_client: Client, settings: Any
) -> None:
    page = reverse("console:webhooks", args=[env.team.slug])
    assert member_client.get(page).status_code == 403
    refused = owner_client.post(page, {"url": "http://127.0.0.1/x", "events": ["skill.archived"]})
    assert refused.status_code == 400
    assert "not a public address" in refused.content.decode()
    assert not Webhook.objects.exists()

    settings.XMEMO_WEBHOOK_ALLOW_PRIVATE = True
    added = owner_client.post(page, {"url": "http://127.0.0.1/x", "events": ["skill.archived"]})
    assert added.status_code == 201
    secret = secret_open(Webhook.objects.get().secret_ciphertext)
    assert secret in added.content.decode()
    assert added["Cache-Control"] == "no-store"
    listed = owner_client.get(page).content.decode()
    assert "http://127.0.0.1/x" in listed
    assert secret not in listed


def test_the_delivery_log_redeliver_and_delete(
    env: Env, owner_client: Client, member_client: Client, settings: Any
) -> None:
    webhook, delivery = make_webhook(env.team, state="failed", attempts=1)
    WebhookAttempt.objects.create(
        delivery=delivery, number=1, status_code=503, latency_ms=12, response_excerpt="busy"
    )
    detail = reverse("console:webhook_detail", args=[env.team.slug, webhook.webhook_id])
    assert member_client.get(detail).status_code == 403
    log = owner_client.get(detail).content.decode()
    assert "HTTP 503" in log
    assert "12 ms" in log
    assert "busy" in log
    redeliver = reverse(
        "console:webhook_redeliver",
        args=[env.team.slug, webhook.webhook_id, delivery.delivery_id],
    )
    assert owner_client.post(redeliver).status_code == 302
    delivery.refresh_from_db()
    assert delivery.state == "pending"
    assert AuditEntry.objects.filter(action="workspace.webhook.redeliver").count() == 1
    assert owner_client.post(detail).status_code == 302
    assert not Webhook.objects.exists()
