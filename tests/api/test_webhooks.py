"""Webhooks over the API and their delivery (docs/contract.md §7, §16): subscriptions, the outbound
guard, events emitted from the services, signed attempts with backoff and a delivery log."""

from __future__ import annotations

import json
from typing import Any

import pytest
from standardwebhooks import Webhook as Verifier

from skills_app.domain.bundle import ComponentData
from skills_app.infra.crypto import secret_encrypt
from skills_app.models import AuditEntry, Webhook, WebhookDelivery
from skills_app.services.evals import evaluation_compute
from skills_app.services.events import EVENT_TYPES
from skills_app.services.jobs import export_start, import_start
from skills_app.services.jobs.run import job_run
from skills_app.services.labels import label_move
from skills_app.services.scans import scans_compute
from skills_app.services.skills import revision_transition, skill_set_status
from skills_app.services.webhooks import delivery_attempt
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env, actor_for, save
from tests.formats.helpers import fixture_zip
from tests.webhook_receiver import receiver

SIGNING_SECRET = "whsec_" + "QUJD" * 8


def _path(env: Env, *rest: str) -> str:
    return "/".join([f"/v1/workspaces/{env.team.slug}/webhooks", *rest])


def _create(api: Any, env: Env, url: str, events: list[str] | None = None) -> Any:
    return api.post(_path(env), {"url": url, "events": events or list(EVENT_TYPES)})


def test_create_answers_the_secret_once_and_admins_manage(
    env: Env, api_for: ApiFactory, settings: Any
) -> None:
    admin = api_for(env.admin)
    settings.XMEMO_WEBHOOK_ALLOW_PRIVATE = True
    created = _create(admin, env, "http://127.0.0.1:9/hook", ["skill.archived"])
    assert created.status_code == 201, created.content
    body = created.json()
    assert set(body) == {"id", "url", "events", "created_at", "secret"}
    assert body["secret"].startswith("whsec_")
    listed = admin.get(_path(env)).json()["results"]
    assert listed == [{k: v for k, v in body.items() if k != "secret"}]
    assert body["secret"] not in admin.get(_path(env)).content.decode()
    denied = api_for(env.member).get(_path(env))
    assert (denied.status_code, error_code(denied)) == (403, "PERMISSION_DENIED")
    assert AuditEntry.objects.filter(action="workspace.webhook.create").count() == 1
    assert admin.delete(_path(env, body["id"])).status_code == 204
    assert not Webhook.objects.exists()
    assert AuditEntry.objects.filter(action="workspace.webhook.delete").count() == 1


@pytest.mark.parametrize(
    ("url", "events"),
    [
        ("http://127.0.0.1:8000/hook", ["skill.archived"]),  # loopback
        ("http://10.1.2.3/hook", ["skill.archived"]),  # private
        ("http://[::1]/hook", ["skill.archived"]),
        ("ftp://example.com/hook", ["skill.archived"]),
        ("http://user:pw@example.com/hook", ["skill.archived"]),
        ("https://example.com/hook", ["skill.created"]),
        ("https://example.com/hook", []),
    ],
)
def test_bad_webhooks_are_refused_with_the_envelope(
    env: Env, api_for: ApiFactory, url: str, events: list[str]
) -> None:
    response = api_for(env.admin).post(_path(env), {"url": url, "events": events})
    assert (response.status_code, error_code(response)) == (400, "VALIDATION_ERROR")
    assert not Webhook.objects.exists()


TRIGGERS = ComponentData(
    "evals/triggers.json", "document", b'{"should_trigger": ["deploy the app"]}', "text/plain"
)


def test_every_event_type_is_emitted_from_the_services(env: Env, settings: Any) -> None:
    settings.XMEMO_WEBHOOK_ALLOW_PRIVATE = True
    Webhook.objects.create(
        workspace=env.team,
        url="http://127.0.0.1:9/",
        events=list(EVENT_TYPES),
        secret_ciphertext=secret_encrypt("whsec_x"),
    )
    owner = actor_for(env.owner)
    first = save(env.member, env.team, slug="deploy", intent="publish").revision  # proposed
    revision_transition(actor=owner, revision=first, action="approve")  # published
    second = save(env.member, env.team, slug="deploy", intent="publish", instruction_body="2")
    revision_transition(actor=owner, revision=second.revision, action="reject", comment="no")
    label_move(actor=owner, skill=first.skill, name="production", revision_id=first.revision_id)
    save(env.member, env.team, slug="other", intent="draft")  # a draft announces nothing
    checked = save(env.member, env.team, slug="checked", intent="draft", components=(TRIGGERS,))
    evaluation_compute(revision=checked.revision)  # revision.evaluated
    revision_transition(actor=owner, revision=first, action="deprecate")
    skill_set_status(actor=owner, skill=first.skill, status="archived")
    imported = import_start(
        actor=owner, workspace=env.team, data=fixture_zip("disk-usage"), filename="d.zip"
    )
    job_run(job_id=imported.job_id)  # jobs are queued after a commit this test never makes
    job_run(job_id=export_start(actor=owner, revision=first).job_id)
    types = list(WebhookDelivery.objects.order_by("id").values_list("event_type", flat=True))
    # Two saves proposed; the import's draft announces nothing.
    assert sorted(types) == sorted([*EVENT_TYPES, "revision.proposed"])
    published = WebhookDelivery.objects.get(event_type="revision.published").payload
    assert set(published) == {"id", "type", "created_at", "workspace", "data"}
    assert published["workspace"] == env.team.slug
    assert published["data"]["revision_id"] == first.revision_id
    assert published["data"]["actor"] == env.owner.username


def test_attempts_are_signed_logged_retried_and_guarded(env: Env, settings: Any) -> None:
    settings.XMEMO_WEBHOOK_ALLOW_PRIVATE = True
    settings.XMEMO_WEBHOOK_MAX_ATTEMPTS = 3
    settings.XMEMO_WEBHOOK_BACKOFF_SECONDS = 2
    with receiver(flaky={"/flaky": 1}, redirect={"/moved"}) as rec:
        hooks = {
            path: Webhook.objects.create(
                workspace=env.team,
                url=rec.base_url + path,
                events=["skill.archived"],
                secret_ciphertext=secret_encrypt(SIGNING_SECRET),
            )
            for path in ("/flaky", "/moved")
        }
        skill = save(env.member, env.team, slug="deploy").revision.skill
        skill_set_status(actor=actor_for(env.owner), skill=skill, status="archived")
        flaky = WebhookDelivery.objects.get(webhook=hooks["/flaky"])
        assert delivery_attempt(delivery_id=flaky.delivery_id) == 2  # 500: wait base * 2**0
        assert delivery_attempt(delivery_id=flaky.delivery_id) is None  # 200: done
        assert delivery_attempt(delivery_id=flaky.delivery_id) is None  # nothing left to do
        [failed, ok] = rec.on("/flaky")
        assert (failed.status, ok.status) == (500, 200)
        assert failed.headers["webhook-id"] == ok.headers["webhook-id"] == flaky.event_id
        verified = Verifier(SIGNING_SECRET).verify(ok.body, ok.headers)
        assert verified == flaky.payload == json.loads(ok.body)
        flaky.refresh_from_db()
        assert (flaky.state, flaky.attempts) == ("succeeded", 2)
        log = list(flaky.attempt_log.values_list("number", "status_code", "response_excerpt"))
        assert log == [(1, 500, "boom"), (2, 200, "ok")]

        moved = WebhookDelivery.objects.get(webhook=hooks["/moved"])
        assert delivery_attempt(delivery_id=moved.delivery_id) == 2
        assert delivery_attempt(delivery_id=moved.delivery_id) == 4
        settings.XMEMO_WEBHOOK_ALLOW_PRIVATE = False  # the guard is checked on every attempt
        assert delivery_attempt(delivery_id=moved.delivery_id) is None  # third: gives up
        assert len(rec.on("/moved")) == 2  # a redirect is never followed; the refusal sent nothing
        moved.refresh_from_db()
        assert moved.state == "failed"
        last = moved.attempt_log.last()
        assert last is not None
        assert last.status_code is None
        assert "not a public address" in last.error


def test_the_delivery_log_and_redelivery_over_the_api(
    env: Env, api_for: ApiFactory, settings: Any
) -> None:
    settings.XMEMO_WEBHOOK_ALLOW_PRIVATE = True
    settings.XMEMO_WEBHOOK_MAX_ATTEMPTS = 1
    admin = api_for(env.admin)
    with receiver(flaky={"/hook": 1}) as rec:
        hook = _create(admin, env, rec.base_url + "/hook", ["skill.archived"]).json()
        skill = save(env.member, env.team, slug="deploy").revision.skill
        skill_set_status(actor=actor_for(env.owner), skill=skill, status="archived")
        delivery = WebhookDelivery.objects.get()
        delivery_attempt(delivery_id=delivery.delivery_id)
        [row] = admin.get(_path(env, hook["id"], "deliveries")).json()["results"]
        assert (row["id"], row["type"], row["state"]) == (
            delivery.delivery_id,
            "skill.archived",
            "failed",
        )
        assert [(a["number"], a["status_code"]) for a in row["attempts"]] == [(1, 500)]
        redeliver = _path(env, hook["id"], "deliveries", delivery.delivery_id, "redeliver")
        assert api_for(env.member).post(redeliver).status_code == 403
        answer = admin.post(redeliver)
        assert answer.status_code == 202
        assert answer.json()["state"] == "pending"
        twice = admin.post(redeliver)  # still pending: refused, not queued a second time
        assert (twice.status_code, error_code(twice)) == (409, "CONFLICT")
        delivery_attempt(delivery_id=delivery.delivery_id, round_start=1)
        [row] = admin.get(_path(env, hook["id"], "deliveries")).json()["results"]
        assert row["state"] == "succeeded"
        assert [(a["number"], a["status_code"]) for a in row["attempts"]] == [(1, 500), (2, 200)]
        assert len(rec.on("/hook")) == 2
    missing = admin.post(_path(env, hook["id"], "deliveries", "whd_nope", "redeliver"))
    assert (missing.status_code, error_code(missing)) == (404, "NOT_FOUND")


# Moves of a revision; revision.evaluated (no move) is tests/services/test_evals.py's.
REVISION_EVENTS = [
    t for t in EVENT_TYPES if t.startswith("revision.") and t != "revision.evaluated"
]


def test_every_revision_event_says_which_skill_and_revision_moved(env: Env, settings: Any) -> None:
    """docs/contract.md §16: a revision event's data holds skill_id, slug, revision_id,
    revision_number and state, whichever way the revision moved (a save, a review decision, a
    deprecation, or being superseded by a newer publication). Sent, signed, to a real receiver."""
    settings.XMEMO_WEBHOOK_ALLOW_PRIVATE = True
    owner = actor_for(env.owner)
    with receiver() as rec:
        Webhook.objects.create(
            workspace=env.team,
            url=rec.base_url + "/all",
            events=REVISION_EVENTS,
            secret_ciphertext=secret_encrypt(SIGNING_SECRET),
        )
        first = save(env.member, env.team, slug="deploy", intent="publish").revision  # proposed
        skill = first.skill
        revision_transition(actor=owner, revision=first, action="approve")  # published
        second = save(env.member, env.team, slug="deploy", intent="publish", instruction_body="2")
        revision_transition(actor=owner, revision=second.revision, action="reject", comment="no")
        third = save(env.member, env.team, slug="deploy", intent="publish", instruction_body="3")
        # Publishing the third supersedes the first: revision.deprecated for the first.
        revision_transition(actor=owner, revision=third.revision, action="approve")
        revision_transition(actor=owner, revision=third.revision, action="deprecate")
        for delivery in WebhookDelivery.objects.order_by("id"):
            assert delivery_attempt(delivery_id=delivery.delivery_id) is None
        verifier = Verifier(SIGNING_SECRET)
        events = [verifier.verify(r.body, r.headers) for r in rec.on("/all")]

    seen = [
        (
            e["type"],
            e["data"]["skill_id"],
            e["data"]["slug"],
            e["data"]["revision_id"],
            e["data"]["revision_number"],
            e["data"]["state"],
        )
        for e in events
    ]
    rev = {1: first.revision_id, 2: second.revision.revision_id, 3: third.revision.revision_id}
    sid = skill.skill_id
    assert seen == [
        ("revision.proposed", sid, "deploy", rev[1], 1, "proposed"),
        ("revision.scanned", sid, "deploy", rev[1], 1, "proposed"),  # approval waits for it
        ("revision.published", sid, "deploy", rev[1], 1, "published"),
        ("revision.proposed", sid, "deploy", rev[2], 2, "proposed"),
        ("revision.rejected", sid, "deploy", rev[2], 2, "draft"),
        ("revision.proposed", sid, "deploy", rev[3], 3, "proposed"),
        ("revision.scanned", sid, "deploy", rev[3], 3, "proposed"),
        ("revision.deprecated", sid, "deploy", rev[1], 1, "deprecated"),
        ("revision.published", sid, "deploy", rev[3], 3, "published"),
        ("revision.deprecated", sid, "deploy", rev[3], 3, "deprecated"),
    ]
    assert {e["type"] for e in events} == set(REVISION_EVENTS)
    by_type = {e["type"]: e["data"] for e in events}
    # The keys receivers already read stay.
    assert (by_type["revision.published"]["from"], by_type["revision.published"]["to"]) == (
        "proposed",
        "published",
    )
    assert by_type["revision.rejected"]["comment"] == "no"
    assert events[7]["data"]["superseded_by"] == rev[3]
    assert all(e["data"]["actor"] for e in events)


def test_an_approval_that_does_not_publish_yet_announces_nothing(env: Env, settings: Any) -> None:
    """With two approvals required the first one moves nothing: no second revision.proposed."""
    settings.XMEMO_WEBHOOK_ALLOW_PRIVATE = True
    env.team.required_approvals = 2
    env.team.save(update_fields=["required_approvals"])
    Webhook.objects.create(
        workspace=env.team,
        url="http://127.0.0.1:9/",
        events=REVISION_EVENTS,
        secret_ciphertext=secret_encrypt("whsec_x"),
    )
    proposed = save(env.member, env.team, slug="deploy", intent="publish").revision
    scans_compute(revision_ids=[proposed.revision_id])  # as the worker does after the commit
    revision_transition(actor=actor_for(env.owner), revision=proposed, action="approve")
    types = list(WebhookDelivery.objects.order_by("id").values_list("event_type", flat=True))
    assert types == ["revision.proposed", "revision.scanned"]
    revision_transition(actor=actor_for(env.admin), revision=proposed, action="approve")
    types = list(WebhookDelivery.objects.order_by("id").values_list("event_type", flat=True))
    assert types == ["revision.proposed", "revision.scanned", "revision.published"]
