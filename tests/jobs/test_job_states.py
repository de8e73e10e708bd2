"""Job state on PostgreSQL: whatever the bytes, a job ends with its real error; a job ends as a
poll read it (the stale verdict and a job's own finish never contradict each other); progress
is visible while a job runs."""

from __future__ import annotations

import io
import threading
import zipfile
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, connections
from django.utils import timezone

from skills_app import errors
from skills_app.domain.bundle import ComponentData
from skills_app.domain.jobs import STALE_AFTER
from skills_app.models import Job, Skill
from skills_app.selectors.jobs import job_as_read
from skills_app.services import jobs
from skills_app.services.jobs import run, start
from skills_app.services.skills import skill_save
from tests.factories import Env, actor_for, build_env, save
from tests.support import require_service


@pytest.fixture(autouse=True)
def _postgresql() -> None:
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")


@pytest.fixture
def run_now(django_capture_on_commit_callbacks: Any) -> Callable[..., Job]:
    def start(fn: Callable[..., Job], **kwargs: Any) -> Job:
        with django_capture_on_commit_callbacks(execute=True):
            job = fn(**kwargs)
        job.refresh_from_db()
        return job

    return start


def _zip_with_nul_name() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("SKILL.md", "---\nname: nul\ndescription: d\n---\nbody\n")
        archive.writestr("aXb.md", "text")
    # zipfile will not write a NUL into a name; patch it into both headers.
    return buffer.getvalue().replace(b"aXb.md", b"a\0b.md")


def _pack(names: tuple[str, ...]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in names:
            archive.writestr(f"{name}/SKILL.md", f"---\nname: {name}\ndescription: d\n---\nbody\n")
    return buffer.getvalue()


# --- NUL bytes ------------------------------------------------------------------------------


def test_a_zip_entry_named_with_a_nul_is_refused_with_its_real_code(env: Env) -> None:
    # Refused before a job stores the upload (the ZIP's directory is read at the request).
    with pytest.raises(errors.UnsafeArchive) as refused:
        jobs.import_start(
            actor=actor_for(env.owner),
            workspace=env.personal,
            data=_zip_with_nul_name(),
            filename="nul.zip",
        )
    assert "NUL" in refused.value.message
    assert not Job.objects.exists()


NUL_SCRIPT = b'import sys\nprint("a\\0b", file=sys.stderr)\nprint(\'{"x": "\\\\u0000"}\')\n'


def test_a_script_printing_a_nul_ends_failed_with_a_script_error(
    env: Env, bwrap: str, run_now: Callable[..., Job]
) -> None:
    rev = save(
        env.owner,
        env.personal,
        slug="nul-printer",
        frontmatter={"class": "safe", "timeout_seconds": 10},
        components=(ComponentData("nul.py", "script", NUL_SCRIPT, "text/x-python"),),
    ).revision
    job = run_now(
        jobs.execute_start,
        actor=actor_for(env.owner),
        revision=rev,
        resource="nul.py",
        args={},
    )
    assert job.state == "failed", job.result
    assert job.error["code"] == "SCRIPT_FAILED"
    assert job.error["details"]["reason"] == "PROTOCOL_ERROR"
    assert "NUL" in job.error["message"]
    assert "\0" not in job.log
    assert "a" in job.log


# --- the stale sweep against a job's own finish -----------------------------------------------


def _running_long_ago(env: Env) -> Job:
    job = jobs.import_start(
        actor=actor_for(env.owner), workspace=env.personal, data=_pack(("one",)), filename="p.zip"
    )
    long_ago = timezone.now() - STALE_AFTER - timedelta(seconds=5)
    Job.objects.filter(pk=job.pk).update(state="running", attempts=1, started_at=long_ago)
    job.refresh_from_db()
    return job


def test_the_sweep_does_not_overwrite_a_job_that_finished(env: Env) -> None:
    job = jobs.import_start(
        actor=actor_for(env.owner), workspace=env.personal, data=_pack(("one",)), filename="p.zip"
    )
    run.job_run(job_id=job.job_id)
    long_ago = timezone.now() - STALE_AFTER - timedelta(seconds=5)
    Job.objects.filter(pk=job.pk).update(started_at=long_ago)  # it ran long ago …
    assert run.jobs_fail_stale() == 0  # … and ended: the sweep leaves it
    job.refresh_from_db()
    assert job.state == "succeeded", job.error
    assert job.error is None
    assert job.result["skills"][0]["slug"] == "one"


def test_a_redelivered_job_that_reads_failed_stays_failed(env: Env) -> None:
    job = _running_long_ago(env)
    read = job_as_read(Job.objects.get(pk=job.pk))
    assert read.state == "failed"
    run.job_run(job_id=job.job_id)  # the late redelivery …
    job.refresh_from_db()
    assert (job.state, job.error) == ("failed", read.error)  # … ends as the poller read it
    assert not Skill.objects.exists()


def test_a_finish_does_not_overwrite_a_job_that_read_failed_meanwhile(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = jobs.import_start(
        actor=actor_for(env.owner), workspace=env.personal, data=_pack(("one",)), filename="p.zip"
    )
    real = run.HANDLERS[Job.Kind.IMPORT]
    reads: list[Job] = []

    def slow_import(running: Job, actor: Any) -> Any:
        # While the handler works, its start looks older than STALE_AFTER to a poller.
        long_ago = timezone.now() - STALE_AFTER - timedelta(seconds=5)
        Job.objects.filter(pk=running.pk).update(started_at=long_ago)
        reads.append(job_as_read(Job.objects.get(pk=running.pk)))
        return real(running, actor)

    monkeypatch.setitem(run.HANDLERS, Job.Kind.IMPORT, slow_import)
    run.job_run(job_id=job.job_id)
    job.refresh_from_db()
    assert reads[0].state == "failed"
    assert job.state == "failed"
    assert job.error == reads[0].error  # what the poller read is what stays
    assert job.result is None
    assert not Skill.objects.exists()  # a job that did not succeed stored nothing


def test_the_sweep_leaves_a_job_that_restarted(env: Env) -> None:
    job = _running_long_ago(env)
    Job.objects.filter(pk=job.pk).update(started_at=timezone.now(), attempts=2)
    assert run.jobs_fail_stale() == 0
    job.refresh_from_db()
    assert job.state == "running"


# --- progress -------------------------------------------------------------------------------


@pytest.fixture
def committed_env(transactional_db: None) -> Env:
    return build_env()


@pytest.mark.django_db(transaction=True)
def test_import_progress_is_visible_while_the_import_runs(
    committed_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = committed_env
    monkeypatch.setattr(start, "_enqueue", lambda job: None)  # run below, in this thread
    job = jobs.import_start(
        actor=actor_for(env.owner),
        workspace=env.personal,
        data=_pack(("one", "two", "three")),
        filename="p.zip",
    )
    real_save = skill_save
    seen: list[tuple[int, int, str]] = []

    def observed_save(**kwargs: Any) -> Any:
        # What another connection (the API answering a poll) sees right now.
        def look() -> None:
            try:
                row = Job.objects.values_list("progress_done", "progress_total", "state").get(
                    pk=job.pk
                )
                seen.append(row)
            finally:
                connections.close_all()

        poller = threading.Thread(target=look)
        poller.start()
        poller.join()
        return real_save(**kwargs)

    monkeypatch.setattr(run, "skill_save", observed_save)
    run.job_run(job_id=job.job_id)
    job.refresh_from_db()
    assert seen == [(0, 3, "running"), (1, 3, "running"), (2, 3, "running")], (job.state, job.error)
    job.refresh_from_db()
    assert (job.state, job.progress_done, job.progress_total) == ("succeeded", 3, 3)


@pytest.mark.parametrize("target", ["revision", "skill", "workspace"])
def test_a_finished_export_shows_done_equal_to_total(
    env: Env, run_now: Callable[..., Job], target: str
) -> None:
    first = save(env.owner, env.personal, slug="exported")
    save(env.owner, env.personal, slug="exported", instruction_body="second")
    save(env.owner, env.personal, slug="another")
    targets: dict[str, dict[str, Any]] = {
        "revision": {"revision": first.revision},
        "skill": {"skill": first.revision.skill},
        "workspace": {"workspace": env.personal},
    }
    job = run_now(jobs.export_start, actor=actor_for(env.owner), **targets[target])
    assert job.state == "succeeded", job.error
    assert job.progress_total > 0
    assert job.progress_done == job.progress_total
