"""An export that was reading while a skill was deleted for good never finishes with the deleted
skill inside (docs/contract.md §4: a delete removes every copy held by jobs). The race is made
deterministic with a hook between the export's reads and its finalizing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection, connections

from skills_app.formats import backup, capsule
from skills_app.models import AuditEntry, Job, Skill
from skills_app.services import jobs
from skills_app.services.jobs import run, start
from skills_app.services.skills import skill_delete, skill_set_status
from tests.factories import Env, actor_for, build_env, let_authors_approve, make_team, publish
from tests.support import require_service, wait_until


@pytest.fixture
def committed_env(transactional_db: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    monkeypatch.setattr(start, "_enqueue", lambda job: None)  # run below, in this thread
    yield build_env()
    # Through the ORM, so revisions are marked purging first: the flush that ends a
    # transactional test deletes component rows in no set order, which SQLite's trigger refuses.
    Skill.objects.all().delete()


def _doomed(env: Env) -> tuple[Any, Skill]:
    team = make_team(env.owner, slug="racing")
    let_authors_approve(team)
    publish(env.owner, team, slug="kept")
    doomed = publish(env.owner, team, slug="doomed").revision.skill
    skill_set_status(actor=actor_for(env.owner), skill=doomed, status=Skill.Status.ARCHIVED)
    return team, doomed


def _export(env: Env, team: Any, doomed: Skill, target: str) -> Job:
    actor = actor_for(env.owner)
    if target == "workspace":
        return jobs.export_start(actor=actor, workspace=team)
    return jobs.export_start(actor=actor, skill=doomed)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("target", ["workspace", "skill"])
def test_a_delete_committed_between_reading_and_finalizing_fails_the_export(
    committed_env: Env, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    env = committed_env
    team, doomed = _doomed(env)
    job = _export(env, team, doomed, target)
    writer = "backup_write" if target == "workspace" else "capsule_history_write"
    module = backup if target == "workspace" else capsule
    real_write = getattr(module, writer)

    def write_after_a_delete(read: Any) -> bytes:
        # Everything is read; before the file is written and stored, the delete commits.
        skill_delete(actor=actor_for(env.owner), skill=Skill.objects.get(pk=doomed.pk))
        return bytes(real_write(read))

    monkeypatch.setattr(module, writer, write_after_a_delete)
    run.job_run(job_id=job.job_id)

    job.refresh_from_db()
    assert not Skill.objects.filter(pk=doomed.pk).exists()
    assert (job.state, job.error and job.error["code"]) == ("failed", "CONFLICT"), job.result
    assert job.error["details"] == {"deleted": ["doomed"]}
    assert "export again" in job.error["message"]
    assert (job.output_data, job.result) == (None, None)


@pytest.mark.django_db(transaction=True)
def test_a_delete_arriving_while_the_export_finalizes_waits_and_then_erases_it(
    committed_env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_service("postgresql", connection.vendor == "postgresql")
    env = committed_env
    team, doomed = _doomed(env)
    job = _export(env, team, doomed, "workspace")
    deleted: list[BaseException | None] = []

    def delete_in_another_session() -> None:
        try:
            skill_delete(actor=actor_for(env.owner), skill=Skill.objects.get(pk=doomed.pk))
            deleted.append(None)
        except BaseException as exc:  # reported below
            deleted.append(exc)
        finally:
            connections.close_all()

    deleter = threading.Thread(target=delete_in_another_session)
    real_lock = run._exported_skills_lock

    def lock_then_let_the_delete_in(skill_ids: Any) -> Any:
        held = real_lock(skill_ids)
        deleter.start()
        _wait_until_blocked_on_a_lock()
        return held

    monkeypatch.setattr(run, "_exported_skills_lock", lock_then_let_the_delete_in)
    run.job_run(job_id=job.job_id)
    deleter.join(timeout=30)

    assert deleted == [None]
    job.refresh_from_db()
    # The export finished first (it held the skills); the delete then erased its file.
    assert job.state == "succeeded"
    assert job.output_data is None
    tombstone = AuditEntry.objects.get(action="skills.skill.delete", target_id=doomed.skill_id)
    assert job.job_id in tombstone.data["erased_jobs"]


def _wait_until_blocked_on_a_lock() -> None:
    """Until another session of this database waits for a row lock (the delete's)."""
    with connections["default"].cursor() as cursor:

        def waiting() -> bool:
            # Inside a transaction the statistics views keep their first snapshot.
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
            return bool(cursor.fetchone()[0])

        wait_until(waiting, 20, message="the delete never waited for the export's lock")
