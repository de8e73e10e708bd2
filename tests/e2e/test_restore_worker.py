"""A workspace backup restored by a real Celery worker behind gunicorn (PostgreSQL + Redis):
exported over HTTP, restored into a new team over HTTP, polled to the end."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from skills_app.models import Job, Skill
from tests.e2e.processes import (
    celery_worker,
    free_port,
    gunicorn,
    poll_job,
    process_env,
    require_production_services,
    running,
    unique_queue,
)
from tests.factories import let_authors_approve, make_team, make_token, make_user, publish, save


@pytest.mark.django_db(transaction=True)
def test_restore_runs_on_a_real_worker(tmp_path: Path) -> None:
    require_production_services()
    user = make_user("e2e-restorer")
    team = make_team(user, slug="e2e-source")
    let_authors_approve(team)  # a team of one
    publish(user, team, slug="alpha", instruction_body="# Alpha v1\n")
    publish(user, team, slug="alpha", instruction_body="# Alpha v2\n")
    save(user, team, slug="beta")
    _, secret = make_token(user)
    queue = unique_queue()
    env = process_env(XMEMO_TASK_QUEUE=queue)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    worker_log = tmp_path / "worker.log"
    with (
        running(celery_worker(queue), env=env, log=worker_log),
        running(gunicorn(port), env=env, ready_url=f"{base}/v1/schema", log=tmp_path / "web.log"),
        httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {secret}"}, timeout=30
        ) as api,
    ):
        # A label on the first revision (docs/contract.md §18): backups keep labels.
        alpha = Skill.objects.get(workspace=team, slug="alpha")
        first = alpha.revisions.get(revision_number=1).revision_id
        moved = api.put(f"/v1/skills/{alpha.skill_id}/labels/rollback", json={"revision_id": first})
        assert moved.status_code == 200, moved.text
        export = poll_job(
            api, api.post("/v1/exports", json={"workspace": "e2e-source"}).json()["job_id"]
        )
        assert export["state"] == "succeeded", (export, worker_log.read_text()[-2000:])
        backup = api.get(export["result"]["download_url"]).content

        assert api.post("/v1/workspaces", json={"slug": "e2e-copy", "name": "Copy"}).is_success
        started = api.post(
            "/v1/workspaces/e2e-copy/restore",
            files={"file": ("backup.zip", backup, "application/zip")},
        )
        assert started.status_code == 202, started.text
        assert (started.json()["kind"], started.json()["state"]) == ("restore", "queued")
        job = poll_job(api, started.json()["job_id"])
        assert job["state"] == "succeeded", (job, worker_log.read_text()[-2000:])
        assert job["progress"] == {"done": 3, "total": 3}
        assert sorted(s["slug"] for s in job["result"]["skills"]) == ["alpha", "beta"]
        by_label = api.get("/v1/recall", params={"slug": "e2e-copy/alpha", "label": "rollback"})
        assert by_label.status_code == 200, by_label.text
        assert by_label.json()["data"]["revision_number"] == 1
        assert by_label.json()["data"]["instruction_body"] == "# Alpha v1\n"
        copy_id = by_label.json()["data"]["skill_id"]
        [label] = api.get(f"/v1/skills/{copy_id}/labels").json()
        assert (label["name"], label["revision_number"], label["moved_by"]) == (
            "rollback",
            1,
            "e2e-restorer",
        )

    # The worker ended the job: its upload is gone from the row (docs/contract.md §16b).
    assert (
        Job.objects.filter(job_id=job["job_id"]).values_list("input_data", flat=True).get() is None
    )

    copies = {
        skill.slug: sorted(
            skill.revisions.values_list("revision_number", "state", "canonical_hash")
        )
        for skill in Skill.objects.filter(workspace__slug="e2e-copy")
    }
    originals = {
        skill.slug: sorted(
            skill.revisions.values_list("revision_number", "state", "canonical_hash")
        )
        for skill in Skill.objects.filter(workspace=team)
    }
    assert copies == originals
