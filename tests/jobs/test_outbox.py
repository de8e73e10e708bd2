"""The outbox: a job or webhook delivery the broker could not take when it committed is sent
by the sweep (the periodic task, as a worker runs it), once; executions go to their own queue;
a workspace over its execution cap waits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.utils import timezone
from kombu.exceptions import OperationalError

from skills_app.domain.bundle import ComponentData
from skills_app.infra.crypto import secret_encrypt
from skills_app.models import Job, Webhook, WebhookDelivery
from skills_app.services import jobs
from skills_app.services.jobs.run import execution_cap, job_run
from skills_app.services.skills import skill_set_status
from skills_app.tasks import deliver_webhook, run_job, sweep_outbox
from tests.factories import Env, actor_for, make_webhook, save
from tests.support import run_task


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What reached the broker (nothing runs)."""
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(run_job, "apply_async", lambda **kw: calls.append(kw))
    return calls


def _export(env: Env, capture: Callable[..., Any]) -> Job:
    rev = save(env.owner, env.personal).revision
    with capture(execute=True):
        job = jobs.export_start(actor=actor_for(env.owner), revision=rev)
    job.refresh_from_db()
    return job


def test_a_job_committed_while_the_broker_is_down_is_sent_by_the_sweep_once(
    env: Env,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Callable[..., Any],
    settings: Any,
) -> None:
    def broker_down(**kwargs: Any) -> None:
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(run_job, "apply_async", broker_down)
    job = _export(env, django_capture_on_commit_callbacks)
    assert (job.state, job.enqueued_at) == ("queued", None)
    settings.XMEMO_OUTBOX_GRACE_SECONDS = 0
    assert run_task(sweep_outbox) == 0  # still down: nothing sent, nothing lost
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(run_job, "apply_async", lambda **kw: calls.append(kw))
    assert run_task(sweep_outbox) == 1
    assert run_task(sweep_outbox) == 0
    assert calls == [{"args": [job.job_id], "queue": "xmemo", "countdown": None}]
    job.refresh_from_db()
    assert job.enqueued_at is not None


def test_a_job_sent_at_commit_is_not_sent_again_by_the_sweep(
    env: Env,
    sent: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Callable[..., Any],
    settings: Any,
) -> None:
    _export(env, django_capture_on_commit_callbacks)
    settings.XMEMO_OUTBOX_GRACE_SECONDS = 0
    assert run_task(sweep_outbox) == 0
    assert len(sent) == 1


@pytest.mark.parametrize(
    ("setting", "slots", "cap"),
    [(2, 2, 1), (2, 4, 2), (100, 4, 3), (2, 1, 1), (2, None, 2)],
)
def test_execution_caps_stay_below_the_workers_slots(
    setting: int, slots: int | None, cap: int
) -> None:
    """Issue 37 #10: the README's worker runs --concurrency 2 beside caps of 2 (the whole pool);
    a cap is held below the worker's concurrency (None: in-process, no worker)."""
    assert execution_cap(setting, slots) == cap


def test_executions_go_to_their_own_queue_and_wait_over_the_workspace_cap(
    env: Env,
    sent: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Callable[..., Any],
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(run_job.app.conf, "task_always_eager", False)
    settings.XMEMO_EXECUTE_WORKSPACE_CONCURRENCY = 1
    rev = save(
        env.owner,
        env.personal,
        slug="tool",
        components=(ComponentData("run.py", "script", b"print('{}')", "text/x-python"),),
    ).revision
    with django_capture_on_commit_callbacks(execute=True):
        first = jobs.execute_start(
            actor=actor_for(env.owner), revision=rev, resource="run.py", args={}
        )
        second = jobs.execute_start(
            actor=actor_for(env.owner), revision=rev, resource="run.py", args={}
        )
    assert [c["queue"] for c in sent] == ["xmemo-execute", "xmemo-execute"]
    Job.objects.filter(pk=first.pk).update(state="running", attempts=1)
    with django_capture_on_commit_callbacks(execute=True):
        job_run(job_id=second.job_id)
    second.refresh_from_db()
    assert (second.state, second.attempts) == ("queued", 0)  # waited, holding no slot
    assert sent[-1] == {
        "args": [second.job_id],
        "queue": "xmemo-execute",
        "countdown": settings.XMEMO_EXECUTE_CAP_RETRY_SECONDS,
    }


def test_one_person_s_executions_wait_over_their_cap_across_workspaces(
    env: Env,
    sent: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Callable[..., Any],
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tenant with two workspaces does not get twice the slots: the per-person cap counts
    their running scripts in every workspace; another person's script still starts."""
    monkeypatch.setitem(run_job.app.conf, "task_always_eager", False)
    settings.XMEMO_EXECUTE_WORKSPACE_CONCURRENCY = 1
    settings.XMEMO_EXECUTE_USER_CONCURRENCY = 1
    script = (ComponentData("run.py", "script", b"print('{}')", "text/x-python"),)
    own = save(env.owner, env.personal, slug="tool", components=script).revision
    shared = save(env.owner, env.team, slug="tool", components=script).revision
    with django_capture_on_commit_callbacks(execute=True):
        running = jobs.execute_start(
            actor=actor_for(env.owner), revision=own, resource="run.py", args={}
        )
        waiting = jobs.execute_start(
            actor=actor_for(env.owner), revision=shared, resource="run.py", args={}
        )
        other = jobs.execute_start(
            actor=actor_for(env.member), revision=shared, resource="run.py", args={}
        )
    Job.objects.filter(pk=running.pk).update(state="running", attempts=1)
    with django_capture_on_commit_callbacks(execute=True):
        job_run(job_id=waiting.job_id)
    waiting.refresh_from_db()
    assert (waiting.state, waiting.attempts) == ("queued", 0)  # the owner's cap, not the team's
    assert sent[-1]["args"] == [waiting.job_id]
    monkeypatch.setattr("skills_app.services.jobs.run.HANDLERS", {"execute": lambda j, a: ({}, {})})
    job_run(job_id=other.job_id)
    other.refresh_from_db()
    assert other.state == "succeeded"  # the team's slot was free for another person


def test_a_delivery_emitted_while_the_broker_is_down_is_sent_by_the_same_sweep_once(
    env: Env,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Callable[..., Any],
    settings: Any,
) -> None:
    def broker_down(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    Webhook.objects.create(
        workspace=env.team,
        url="https://hooks.example/x",
        events=["skill.archived"],
        secret_ciphertext=secret_encrypt("whsec_x"),
    )
    monkeypatch.setattr(deliver_webhook, "apply_async", broker_down)
    skill = save(env.member, env.team, slug="deploy").revision.skill
    with django_capture_on_commit_callbacks(execute=True):
        skill_set_status(actor=actor_for(env.owner), skill=skill, status="archived")
    delivery = WebhookDelivery.objects.get()
    assert (delivery.state, delivery.enqueued_at) == ("pending", None)  # unclaimed, not lost
    settings.XMEMO_OUTBOX_GRACE_SECONDS = 0
    assert run_task(sweep_outbox) == 0  # still down
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(deliver_webhook, "apply_async", lambda *a, **kw: calls.append((a, kw)))
    assert run_task(sweep_outbox) == 1
    assert run_task(sweep_outbox) == 0
    assert calls == [((), {"args": [delivery.delivery_id, 0]})]
    delivery.refresh_from_db()
    assert delivery.enqueued_at is not None


def test_a_delivery_sent_at_commit_is_not_swept_again(
    env: Env,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Callable[..., Any],
    settings: Any,
) -> None:
    make_webhook(env.team)  # a delivery made before the outbox: already handed over
    WebhookDelivery.objects.update(enqueued_at=timezone.now())
    Webhook.objects.update(events=["skill.archived"])
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(deliver_webhook, "apply_async", lambda *a, **kw: calls.append((a, kw)))
    skill = save(env.member, env.team, slug="deploy").revision.skill
    with django_capture_on_commit_callbacks(execute=True):
        skill_set_status(actor=actor_for(env.owner), skill=skill, status="archived")
    assert len(calls) == 1
    settings.XMEMO_OUTBOX_GRACE_SECONDS = 0
    assert run_task(sweep_outbox) == 0
    assert len(calls) == 1
