"""Webhook signing secrets at rest: encrypted like workspace secrets (same keys, same rotation
command), never readable from the row, and still signing every delivery."""

from __future__ import annotations

from typing import Any

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from standardwebhooks import Webhook as Verifier

from skills_app.models import Webhook, WebhookDelivery
from skills_app.services.skills import skill_set_status
from skills_app.services.webhooks import delivery_attempt, webhook_create
from tests.factories import Env, actor_for, make_team, make_user, save
from tests.support import require_service
from tests.webhook_receiver import receiver


def _row_text(webhook_id: str) -> str:
    """Everything the database holds for the webhook, as an attacker reading it would see."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM skills_app_webhook WHERE webhook_id = %s", [webhook_id])
        return repr(cursor.fetchall())


def test_the_secret_is_encrypted_at_rest_rotated_and_still_signs(env: Env, settings: Any) -> None:
    settings.XMEMO_WEBHOOK_ALLOW_PRIVATE = True
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.XMEMO_SECRETS_KEY = [old]
    with receiver() as rec:
        webhook, secret = webhook_create(
            actor=actor_for(env.owner),
            workspace=env.team,
            url=rec.base_url + "/hook",
            events=["skill.archived"],
        )
        assert secret not in _row_text(webhook.webhook_id)
        assert secret.removeprefix("whsec_") not in _row_text(webhook.webhook_id)
        settings.XMEMO_SECRETS_KEY = [new, old]
        call_command("rotate_workspace_secrets")
        settings.XMEMO_SECRETS_KEY = [new]  # the old key can go: the webhook moved too
        skill = save(env.member, env.team, slug="deploy").revision.skill
        skill_set_status(actor=actor_for(env.owner), skill=skill, status="archived")
        delivery = WebhookDelivery.objects.get(webhook=webhook)
        assert delivery_attempt(delivery_id=delivery.delivery_id) is None
        [received] = rec.on("/hook")
        assert received.status == 200
        assert Verifier(secret).verify(received.body, received.headers) == delivery.payload
        assert secret not in _row_text(webhook.webhook_id)


def test_a_secret_no_key_opens_fails_the_attempt_with_a_logged_reason(
    env: Env, settings: Any
) -> None:
    settings.XMEMO_WEBHOOK_ALLOW_PRIVATE = True
    settings.XMEMO_WEBHOOK_MAX_ATTEMPTS = 1
    settings.XMEMO_SECRETS_KEY = [Fernet.generate_key().decode()]
    with receiver() as rec:
        webhook_create(
            actor=actor_for(env.owner),
            workspace=env.team,
            url=rec.base_url + "/hook",
            events=["skill.archived"],
        )
        settings.XMEMO_SECRETS_KEY = [Fernet.generate_key().decode()]  # the key was lost
        skill = save(env.member, env.team, slug="deploy").revision.skill
        skill_set_status(actor=actor_for(env.owner), skill=skill, status="archived")
        delivery = WebhookDelivery.objects.get()
        assert delivery_attempt(delivery_id=delivery.delivery_id) is None
        assert rec.requests == []  # nothing unsigned or wrongly signed went out
    delivery.refresh_from_db()
    assert delivery.state == "failed"
    attempt = delivery.attempt_log.get()
    assert "XMEMO_SECRETS_KEY" in attempt.error


@pytest.mark.django_db(transaction=True)
def test_the_migration_encrypts_plaintext_secrets(settings: Any) -> None:
    # The old row is written in PostgreSQL's SQL, and migrating SQLite back to 0009 rebuilds the
    # revision table under the component triggers, which SQLite refuses (docs/operations.md:
    # the embedded default migrates forwards only).
    require_service(
        "PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL to a PostgreSQL database"
    )
    team = make_team(make_user("migrating"), slug="migrating-team")
    executor = MigrationExecutor(connection)
    before = [("skills_app", "0009_invitations_webhooks")]
    after = executor.loader.graph.leaf_nodes("skills_app")
    executor.migrate(before)
    plain = "whsec_" + "QUJD" * 8
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO skills_app_webhook (webhook_id, workspace_id, url, events, secret, "
            "created_at) VALUES ('wh_old', %s, 'https://hooks.example/x', '[]', %s, now())",
            [team.pk, plain],
        )
    executor = MigrationExecutor(connection)
    executor.migrate(after)
    assert plain not in _row_text("wh_old")
    with receiver() as rec:
        Webhook.objects.filter(webhook_id="wh_old").update(
            url=rec.base_url + "/hook", events=["skill.archived"]
        )
        delivery = WebhookDelivery.objects.create(
            webhook=Webhook.objects.get(webhook_id="wh_old"),
            event_id="evt_old",
            event_type="skill.archived",
            payload={"id": "evt_old"},
        )
        settings.XMEMO_WEBHOOK_ALLOW_PRIVATE = True
        assert delivery_attempt(delivery_id=delivery.delivery_id) is None
        [received] = rec.on("/hook")
    assert Verifier(plain).verify(received.body, received.headers) == {"id": "evt_old"}
