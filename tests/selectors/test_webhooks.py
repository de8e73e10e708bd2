"""Reads of webhooks: the console's lists and the one-object lookups of ``access``, each for the
workspace's owners and admins only, a stranger's answering NotFound."""

from __future__ import annotations

from typing import Any

import pytest

from skills_app import errors
from skills_app.access import delivery_for, webhook_for
from skills_app.models import WebhookAttempt, WebhookDelivery
from skills_app.selectors.webhooks import delivery_rows, webhook_rows
from tests.factories import Env, actor_for, make_team, make_token, make_webhook

pytestmark = pytest.mark.django_db


def test_webhook_rows_are_the_workspaces_own_newest_first(env: Env) -> None:
    first, _ = make_webhook(env.team)
    second, _ = make_webhook(env.team)
    make_webhook(make_team(env.outsider))
    rows = webhook_rows(actor=actor_for(env.admin), workspace=env.team)
    assert [w.webhook_id for w in rows] == [second.webhook_id, first.webhook_id]


@pytest.mark.parametrize("role", ["member", "outsider"])
def test_webhook_reads_refuse_members_and_strangers(env: Env, role: str) -> None:
    webhook, delivery = make_webhook(env.team)
    user = env.member if role == "member" else env.outsider
    expected = errors.PermissionDenied if role == "member" else errors.NotFound
    actor = actor_for(user)
    with pytest.raises(expected):
        webhook_rows(actor=actor, workspace=env.team)
    with pytest.raises(expected):
        webhook_for(actor=actor, workspace=env.team, webhook_id=webhook.webhook_id)
    with pytest.raises(expected):
        delivery_rows(actor=actor, webhook=webhook, limit=5)
    with pytest.raises(expected):
        delivery_for(actor=actor, webhook=webhook, delivery_id=delivery.delivery_id)


def test_a_token_needs_workspace_admin(env: Env) -> None:
    token, _ = make_token(env.owner, ["skills:read"])
    with pytest.raises(errors.PermissionDenied):
        webhook_rows(actor=actor_for(env.owner, token=token), workspace=env.team)


def test_webhook_for_finds_only_the_workspaces_own(env: Env) -> None:
    webhook, delivery = make_webhook(env.team)
    other_team = make_team(env.owner)
    other, other_delivery = make_webhook(other_team)
    actor = actor_for(env.owner)
    assert webhook_for(actor=actor, workspace=env.team, webhook_id=webhook.webhook_id) == webhook
    with pytest.raises(errors.NotFound):
        webhook_for(actor=actor, workspace=env.team, webhook_id=other.webhook_id)
    found = delivery_for(actor=actor, webhook=webhook, delivery_id=delivery.delivery_id)
    assert found == delivery
    with pytest.raises(errors.NotFound):
        delivery_for(actor=actor, webhook=webhook, delivery_id=other_delivery.delivery_id)


def test_delivery_rows_are_the_newest_with_their_attempts_in_two_queries(
    env: Env, django_assert_num_queries: Any
) -> None:
    webhook, oldest = make_webhook(env.team)
    for n in range(3):
        made = WebhookDelivery.objects.create(
            webhook=webhook, event_id=f"evt_{n}", event_type="skill.archived", payload={}
        )
        WebhookAttempt.objects.create(delivery=made, number=2, status_code=500)
        WebhookAttempt.objects.create(delivery=made, number=1, error="timeout")
    actor = actor_for(env.owner)
    webhook = webhook_for(actor=actor, workspace=env.team, webhook_id=webhook.webhook_id)
    actor.role_in(env.team)  # the role is asked once per actor; count the reads only
    with django_assert_num_queries(2):
        rows = delivery_rows(actor=actor, webhook=webhook, limit=2)
        attempts = [[a.number for a in row.attempt_log.all()] for row in rows]
    assert [row.event_id for row in rows] == ["evt_2", "evt_1"]
    assert oldest not in rows
    assert attempts == [[1, 2], [1, 2]]
