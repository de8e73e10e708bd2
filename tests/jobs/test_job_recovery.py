"""Jobs never end half-stored or stuck: crashes roll back, redelivery re-runs, stale jobs fail."""

from __future__ import annotations

import io
import zipfile
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from skills_app.domain.jobs import QUEUED_STALE_AFTER, STALE_AFTER
from skills_app.models import Job, Skill, SkillRevision
from skills_app.selectors.jobs import job_get
from skills_app.services import jobs
from skills_app.services.jobs import run
from skills_app.services.skills import skill_save
from skills_app.tasks import fail_stale_jobs
from tests.factories import Env, actor_for
from tests.support import run_task


def _pack() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in ("one", "two", "three"):
            archive.writestr(f"{name}/SKILL.md", f"---\nname: {name}\ndescription: d\n---\nbody\n")
    return buffer.getvalue()


def _queued_import(env: Env) -> Job:
    # Not run: the on_commit callback is not executed inside a test transaction.
    return jobs.import_start(
        actor=actor_for(env.owner), workspace=env.personal, data=_pack(), filename="p.zip"
    )


def test_a_crash_midway_through_an_import_stores_nothing(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_save = skill_save
    calls = []

    def crashing_save(**kwargs: Any) -> Any:
        calls.append(kwargs["slug"])
        if len(calls) == 2:
            raise RuntimeError("worker lost its database connection")
        return real_save(**kwargs)

    monkeypatch.setattr(run, "skill_save", crashing_save)
    job = _queued_import(env)
    run.job_run(job_id=job.job_id)
    job.refresh_from_db()
    assert calls == ["one", "two"]
    assert job.state == "failed"
    assert job.error["code"] == "JOB_FAILED"
    assert not Skill.objects.exists()
    assert not SkillRevision.objects.exists()


def test_a_redelivered_job_that_was_running_runs_again(env: Env) -> None:
    job = _queued_import(env)
    # The worker that took it died after marking it running.
    Job.objects.filter(pk=job.pk).update(state="running", attempts=1, started_at=timezone.now())
    run.job_run(job_id=job.job_id)
    job.refresh_from_db()
    assert job.state == "succeeded", job.error
    assert job.attempts == 2
    assert Skill.objects.count() == 3


def test_a_job_redelivered_too_often_fails(env: Env) -> None:
    job = _queued_import(env)
    Job.objects.filter(pk=job.pk).update(state="running", attempts=run.MAX_ATTEMPTS)
    run.job_run(job_id=job.job_id)
    job.refresh_from_db()
    assert job.state == "failed"
    assert "repeatedly" in job.error["message"]
    assert not Skill.objects.exists()


def _state(job: Job) -> str:
    return Job.objects.values_list("state", flat=True).get(pk=job.pk)


def test_a_stale_running_job_reads_failed_and_the_sweep_writes_it(env: Env) -> None:
    job = _queued_import(env)
    long_ago = timezone.now() - STALE_AFTER - timedelta(seconds=1)
    Job.objects.filter(pk=job.pk).update(state="running", started_at=long_ago)
    read = job_get(actor=actor_for(env.owner), job_id=job.job_id)
    assert read.state == "failed"
    assert _state(job) == "running"  # the read wrote nothing
    fresh = _queued_import(env)
    Job.objects.filter(pk=fresh.pk).update(state="running", started_at=timezone.now())
    assert job_get(actor=actor_for(env.owner), job_id=fresh.job_id).state == "running"
    assert run_task(fail_stale_jobs) == 1  # the periodic task, as a worker runs it
    assert run_task(fail_stale_jobs) == 0  # idempotent
    job.refresh_from_db()
    assert (job.state, job.error) == ("failed", read.error)  # written as it was read
    assert _state(fresh) == "running"


def test_a_job_no_worker_took_reads_failed_and_the_sweep_writes_it(env: Env) -> None:
    job = _queued_import(env)
    assert job_get(actor=actor_for(env.owner), job_id=job.job_id).state == "queued"
    assert run.jobs_fail_stale() == 0
    long_ago = timezone.now() - QUEUED_STALE_AFTER - timedelta(seconds=1)
    Job.objects.filter(pk=job.pk).update(created_at=long_ago)
    failed = job_get(actor=actor_for(env.owner), job_id=job.job_id)
    assert failed.state == "failed"
    assert "No worker" in failed.error["message"]
    assert _state(job) == "queued"
    call_command("fail_stale_jobs", stdout=io.StringIO())
    job.refresh_from_db()
    assert (job.state, job.error) == ("failed", failed.error)
    run.job_run(job_id=job.job_id)  # a worker that takes it late leaves it failed
    assert _state(job) == "failed"
    assert not Skill.objects.exists()
