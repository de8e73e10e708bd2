"""Webhooks through the production topology: gunicorn takes the API calls, a real Celery worker
over Redis delivers every event type, signed, to a real local receiver; a receiver that fails
twice gets its event on the third try (short backoff), and the delivery log shows each try. An
event emitted while Redis is down is delivered, once, when it is back."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
from standardwebhooks import Webhook as Verifier

from skills_app.models import WebhookDelivery
from skills_app.services.events import EVENT_TYPES
from tests.e2e.processes import (
    celery_beat,
    celery_worker,
    free_port,
    gunicorn,
    poll_job,
    process_env,
    redis_server,
    require_production_services,
    running,
    unique_queue,
    wait_redis,
)
from tests.factories import make_token, make_user, personal_ws, publish
from tests.formats.helpers import fixture_zip
from tests.webhook_receiver import receiver

# What people do; a scan or a trigger check follows each stored revision on its own schedule and
# is tested where it is sent (tests/api/test_webhooks.py, tests/services/test_evals.py).
MOVES = [t for t in EVENT_TYPES if t not in {"revision.scanned", "revision.evaluated"}]


@pytest.mark.django_db(transaction=True)
def test_every_event_arrives_signed_once_and_a_flaky_receiver_gets_it_on_the_third_try(
    tmp_path: Path,
) -> None:
    require_production_services()
    _, secret = make_token(make_user("hooks-owner"))
    queue = unique_queue()
    env = process_env(
        XMEMO_TASK_QUEUE=queue,
        XMEMO_WEBHOOK_ALLOW_PRIVATE="1",
        XMEMO_WEBHOOK_BACKOFF_SECONDS="0.5",
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    worker_log = tmp_path / "worker.log"
    with (
        receiver(flaky={"/flaky": 2}) as rec,
        running(celery_worker(queue), env=env, log=worker_log),
        running(gunicorn(port), env=env, ready_url=f"{base}/v1/schema", log=tmp_path / "web.log"),
        httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {secret}"}, timeout=20
        ) as api,
    ):
        assert api.post("/v1/workspaces", json={"slug": "hooks", "name": "Hooks"}).is_success
        # A team of one approves its own proposals only once it says so (audited).
        solo = {"require_distinct_reviewer": False}
        assert api.patch("/v1/workspaces/hooks", json=solo).is_success
        hooks = "/v1/workspaces/hooks/webhooks"
        every = api.post(hooks, json={"url": rec.base_url + "/all", "events": list(MOVES)})
        assert every.status_code == 201, every.text
        flaky = api.post(hooks, json={"url": rec.base_url + "/flaky", "events": ["skill.archived"]})
        assert flaky.status_code == 201, flaky.text

        def save(slug: str, body: str) -> str:
            saved = api.post(
                "/v1/skills/save",
                json={
                    "workspace": "hooks",
                    "slug": slug,
                    "name": slug,
                    "description": "A skill.",
                    "instruction_body": body,
                    "intent": "publish",
                },
            )
            assert saved.status_code in (200, 201), saved.text
            return str(saved.json()["revision_id"])

        def act(revision_id: str, action: str, **body: str) -> None:
            done = api.post(f"/v1/revisions/{revision_id}/{action}", json=body)
            assert done.status_code == 200, done.text

        first = save("deploy", "# Deploy\n")  # revision.proposed
        act(first, "approve")  # revision.published
        act(save("deploy", "# Deploy v2\n"), "reject", comment="Not yet.")  # proposed, rejected
        act(first, "deprecate")  # revision.deprecated
        skill_id = api.get(f"/v1/revisions/{first}").json()["skill_id"]
        labelled = api.put(f"/v1/skills/{skill_id}/labels/stable", json={"revision_id": first})
        assert labelled.status_code == 200, labelled.text  # label.moved
        assert api.post(f"/v1/skills/{skill_id}/archive").status_code == 200  # skill.archived
        imported = api.post(
            "/v1/imports",
            files={"file": ("du.zip", fixture_zip("disk-usage"), "application/zip")},
            data={"workspace": "hooks"},
        )
        assert poll_job(api, imported.json()["job_id"])["state"] == "succeeded"  # import.finished
        exported = api.post("/v1/exports", json={"revision_id": first})
        assert poll_job(api, exported.json()["job_id"])["state"] == "succeeded"  # export.finished

        expected = [*MOVES, "revision.proposed"]
        rec.wait_for(lambda: len(rec.on("/all")) >= len(expected) and len(rec.on("/flaky")) >= 3)
        received = rec.on("/all")
        signer = Verifier(every.json()["secret"])
        payloads = [signer.verify(r.body, r.headers) for r in received]  # raises if unsigned
        assert sorted(p["type"] for p in payloads) == sorted(expected)
        assert len({r.headers["webhook-id"] for r in received}) == len(received)  # once each
        for request, payload in zip(received, payloads, strict=True):
            assert payload == json.loads(request.body)
            assert request.headers["webhook-id"] == payload["id"]
            assert payload["workspace"] == "hooks"
            assert request.headers["webhook-signature"].startswith("v1,")
            if payload["type"].startswith("revision."):  # which skill and revision moved
                data = payload["data"]
                assert (data["skill_id"], data["slug"]) == (skill_id, "deploy"), payload
                assert data["revision_id"].startswith("rev_"), payload
                assert data["state"] in {"proposed", "published", "draft", "deprecated"}
                assert isinstance(data["revision_number"], int), payload

        tries = rec.on("/flaky")
        assert [t.status for t in tries] == [500, 500, 200]
        assert len({t.headers["webhook-id"] for t in tries}) == 1
        assert Verifier(flaky.json()["secret"]).verify(tries[2].body, tries[2].headers)["type"] == (
            "skill.archived"
        )
        log_url = f"{hooks}/{flaky.json()['id']}/deliveries"
        [delivery] = api.get(log_url).json()["results"]
        assert delivery["state"] == "succeeded", worker_log.read_text()[-2000:]
        assert [(a["number"], a["status_code"]) for a in delivery["attempts"]] == [
            (1, 500),
            (2, 500),
            (3, 200),
        ]
        assert all(a["latency_ms"] >= 0 for a in delivery["attempts"])


@pytest.mark.django_db(transaction=True)
def test_an_event_emitted_while_redis_is_down_is_delivered_once_it_is_back(
    tmp_path: Path,
) -> None:
    require_production_services()
    user = make_user("outage-hooks")
    _, secret = make_token(user)
    skill = publish(user, personal_ws(user), slug="kept").revision.skill
    redis_port = free_port()
    queue = unique_queue()
    env = process_env(
        XMEMO_TASK_QUEUE=queue,
        REDIS_URL=f"redis://127.0.0.1:{redis_port}/0",
        XMEMO_WEBHOOK_ALLOW_PRIVATE="1",
        XMEMO_OUTBOX_SWEEP_SECONDS="1",
        XMEMO_OUTBOX_GRACE_SECONDS="1",
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with (
        receiver() as rec,
        running(redis_server(redis_port), env=env, log=tmp_path / "redis.log") as redis_proc,
    ):
        wait_redis(redis_port)
        with (
            running(celery_worker(queue), env=env, log=tmp_path / "worker.log"),
            running(celery_beat(), env=env, log=tmp_path / "beat.log"),
            running(
                gunicorn(port), env=env, ready_url=f"{base}/v1/schema", log=tmp_path / "web.log"
            ),
            httpx.Client(
                base_url=base, headers={"Authorization": f"Bearer {secret}"}, timeout=20
            ) as api,
        ):
            hook = api.post(
                "/v1/workspaces/outage-hooks/webhooks",
                json={"url": rec.base_url + "/hook", "events": ["skill.archived"]},
            )
            assert hook.status_code == 201, hook.text
            redis_proc.terminate()
            redis_proc.wait(timeout=10)
            archived = api.post(f"/v1/skills/{skill.skill_id}/archive")
            assert archived.status_code == 200, archived.text
            delivery = WebhookDelivery.objects.get()
            assert (delivery.state, delivery.enqueued_at) == ("pending", None)  # kept, unclaimed
            time.sleep(3)  # sweeps run meanwhile and fail: nothing is lost or sent
            assert rec.requests == []
            with running(redis_server(redis_port), env=env, log=tmp_path / "redis2.log"):
                wait_redis(redis_port)
                rec.wait_for(lambda: len(rec.on("/hook")) >= 1)
                time.sleep(3)  # several more sweeps: none sends it again
    [request] = rec.requests
    assert Verifier(hook.json()["secret"]).verify(request.body, request.headers)["type"] == (
        "skill.archived"
    )
    delivery.refresh_from_db()
    assert (delivery.state, delivery.attempts) == ("succeeded", 1)
    assert delivery.enqueued_at is not None
