"""The attack: a member's script asks for the platform's own secrets through ``env_allow``.

A real script runs on a real Celery worker (behind gunicorn, on PostgreSQL and Redis). Its
manifest names SECRET_KEY, DATABASE_URL and REDIS_URL — all set in the worker's environment —
and one workspace secret. Only the workspace secret may arrive, and only once the revision has
passed review (the member's draft gets none); no value of the worker's environment may appear
anywhere in the job (result, error, log, the whole serialized row), and the secret's value only
as ``***``.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import httpx
import pytest
from cryptography.fernet import Fernet
from django.core import serializers

from skills_app.models import Job, WorkspaceSecret
from tests.e2e.processes import (
    celery_worker,
    execute_queue,
    free_port,
    gunicorn,
    poll_job,
    process_env,
    require_production_services,
    running,
    unique_queue,
)
from tests.factories import make_team, make_token, make_user

# Prints the environment it was started with (``/proc/self/environ``: os.environ would add the
# LC_CTYPE that Python's own locale coercion sets) on stdout (the result) and on stderr (the
# job's log).
DUMP_ENV = """import json, sys
raw = open("/proc/self/environ").read()
env = dict(item.split("=", 1) for item in raw.split("\\0") if item)
print(json.dumps(env), file=sys.stderr)
print(json.dumps({"env": env}))
"""
STOLEN = ["SECRET_KEY", "DATABASE_URL", "REDIS_URL", "XMEMO_SECRETS_KEY", "WORKER_CANARY"]


@pytest.mark.django_db(transaction=True)
def test_a_reviewed_script_gets_workspace_secrets_masked_and_never_the_workers_environment(
    tmp_path: Path, bwrap: str
) -> None:
    require_production_services()
    owner, member = make_user("leak-owner"), make_user("leak-member")
    team = make_team(owner, slug="leak-team", members={member: "member"})
    _, owner_secret = make_token(owner)
    _, member_secret = make_token(member)
    queue = unique_queue()
    env = process_env(
        XMEMO_TASK_QUEUE=queue,
        XMEMO_SECRETS_KEY=Fernet.generate_key().decode(),
        WORKER_CANARY=f"canary-{uuid.uuid4().hex}",
    )
    worker_values = {name: env[name] for name in STOLEN}
    assert all(len(value) >= 8 for value in worker_values.values())
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    deploy_token = f"ws-secret-{uuid.uuid4().hex}"

    def client(secret: str) -> httpx.Client:
        return httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {secret}"}, timeout=10
        )

    with (
        running(celery_worker(queue, execute_queue(queue)), env=env, log=tmp_path / "worker.log"),
        running(gunicorn(port), env=env, ready_url=f"{base}/v1/schema", log=tmp_path / "web.log"),
        client(owner_secret) as admin_api,
        client(member_secret) as member_api,
    ):
        stored = admin_api.put(
            f"/v1/workspaces/{team.slug}/secrets/DEPLOY_TOKEN", json={"value": deploy_token}
        )
        assert stored.status_code == 200, stored.text
        saved = member_api.post(
            "/v1/skills/save",
            json={
                "workspace": team.slug,
                "slug": "env-dump",
                "name": "Env dump",
                "description": "Prints its environment.",
                "instruction_body": "Run it.",
                "frontmatter": {
                    "class": "safe",
                    "env_allow": [*STOLEN, "PATH", "HOME", "DEPLOY_TOKEN"],
                },
                "components": [{"logical_path": "dump.py", "type": "script", "content": DUMP_ENV}],
            },
        )
        assert saved.status_code in (200, 201), saved.text
        revision_id = saved.json()["revision_id"]

        def run() -> tuple[dict, str]:
            started = member_api.post(
                f"/v1/revisions/{revision_id}/execute", json={"resource": "dump.py"}
            )
            assert started.status_code == 202, started.text
            job = poll_job(member_api, started.json()["job_id"])
            assert job["state"] == "succeeded", (job, (tmp_path / "worker.log").read_text()[-2000:])
            return job, member_api.get(f"/v1/jobs/{job['job_id']}").text

        draft_job, draft_answer = run()
        proposed = member_api.post(f"/v1/revisions/{revision_id}/propose", json={})
        assert proposed.status_code == 200, proposed.text
        approved = admin_api.post(f"/v1/revisions/{revision_id}/approve", json={})
        assert approved.status_code == 200, approved.text
        job, answered = run()

    # The draft, which nobody reviewed, gets nothing and is told why.
    assert draft_job["result"]["output"]["env"] == {}
    assert draft_job["result"]["secrets_withheld"] == [*STOLEN, "PATH", "HOME", "DEPLOY_TOKEN"]
    # The published revision gets the workspace secret, and that is all it gets: not even PATH
    # or HOME; its value shows only masked.
    assert job["result"]["output"]["env"] == {"DEPLOY_TOKEN": "***"}
    row = Job.objects.get(job_id=job["job_id"])
    assert '"DEPLOY_TOKEN": "***"' in row.log
    rows = Job.objects.filter(job_id__in=[job["job_id"], draft_job["job_id"]])
    everything = "\n".join(
        [
            answered,
            draft_answer,
            serializers.serialize("json", rows),
            json.dumps(row.params),
            row.log,
        ]
    )
    assert deploy_token not in everything
    for name, value in worker_values.items():
        assert value not in everything, f"the worker's {name} reached the job"
    # The stored secret is ciphertext, not the value.
    assert deploy_token not in WorkspaceSecret.objects.get(name="DEPLOY_TOKEN").ciphertext
