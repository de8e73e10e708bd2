"""The attack: a member reads the team's secrets by running a revision nobody reviewed.

The owner stores ``DB_PASSWORD``; a member saves a *draft* whose manifest asks for it and prints
its environment, then runs it — with their own token, a member-role workspace token, an OAuth
token they consented to with ``skills:execute``; the owner runs a *proposal*. In a team a secret
reaches only the published revision (docs/contract.md §2, §13); every other run gets none of
the ``env_allow`` names and is told so. And the value of every secret a run does get is masked
(``***``) in all the job stores and answers: result, progress lines, error, the row itself.
Real bubblewrap, jobs in-process, through the REST door.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from django.core import serializers
from django.test import Client

from skills_app.models import Job, SkillRevision
from skills_app.services.skills import revision_transition
from tests.api.conftest import Api, ApiFactory
from tests.factories import ALL_SCOPES, Env, actor_for, make_token

# Prints its environment on stdout (the result) and on stderr (the job's progress lines).
DUMP_ENV = """import json, os, sys
env = {k: v for k, v in os.environ.items() if k != "LC_CTYPE"}
print("env " + json.dumps(env), file=sys.stderr)
print(json.dumps({"env": env, "note": "password=" + env.get("DB_PASSWORD", "")}))
"""
# Shows the value everywhere it can, then fails: the error's message and stderr tail.
LEAK_AND_FAIL = """import os, sys
value = os.environ.get("DB_PASSWORD", "")
print("connecting with " + value, file=sys.stderr)
print("not json: " + value)
sys.exit(3)
"""
NAMES = ["DB_PASSWORD", "NOT_A_SECRET"]


@pytest.fixture
def password(env: Env, api_for: ApiFactory) -> str:
    value = f"pw-{uuid.uuid4().hex}"
    stored = api_for(env.owner).put(
        f"/v1/workspaces/{env.team.slug}/secrets/DB_PASSWORD", {"value": value}
    )
    assert stored.status_code == 200, stored.content
    return value


def _save(api: Api, workspace: str, slug: str, *, script: str, intent: str = "draft") -> str:
    saved = api.post(
        "/v1/skills/save",
        {
            "workspace": workspace,
            "slug": slug,
            "name": "Env dump",
            "description": "Prints its environment.",
            "instruction_body": "Run it.",
            "intent": intent,
            "frontmatter": {"class": "safe", "env_allow": NAMES},
            "components": [{"logical_path": "run.py", "type": "script", "content": script}],
        },
    )
    assert saved.status_code in (200, 201), saved.content
    return str(saved.json()["revision_id"])


def _run(api: Api, revision_id: str, capture: Any) -> dict[str, Any]:
    with capture(execute=True):
        started = api.post(f"/v1/revisions/{revision_id}/execute", {"resource": "run.py"})
    assert started.status_code == 202, started.content
    answered = api.get(f"/v1/jobs/{started.json()['job_id']}")
    assert answered.status_code == 200, answered.content
    return dict(answered.json())


def _stored(job_id: str) -> str:
    """Everything the job row holds, read back from the database."""
    row = Job.objects.get(job_id=job_id)
    return serializers.serialize("json", [row]) + row.log + json.dumps(row.result or {})


def _assert_withheld(job: dict[str, Any], value: str, state: str) -> None:
    assert job["state"] == "succeeded", job
    assert job["result"]["output"]["env"] == {}
    assert job["result"]["secrets_withheld"] == NAMES
    row = Job.objects.get(job_id=job["job_id"])
    assert f"this revision is {state}" in row.log
    assert "DB_PASSWORD" in row.log
    assert value not in json.dumps(job)
    assert value not in _stored(job["job_id"])


def test_a_members_draft_gets_no_secret(
    env: Env,
    api_for: ApiFactory,
    password: str,
    bwrap: str,
    django_capture_on_commit_callbacks: Any,
) -> None:
    api = api_for(env.member)
    revision_id = _save(api, env.team.slug, "member-draft", script=DUMP_ENV)
    _assert_withheld(_run(api, revision_id, django_capture_on_commit_callbacks), password, "draft")


def test_a_member_role_workspace_token_gets_no_secret(
    env: Env,
    api_for: ApiFactory,
    password: str,
    bwrap: str,
    django_capture_on_commit_callbacks: Any,
) -> None:
    _, secret = make_token(env.owner, ALL_SCOPES, workspace=env.team, role="member")
    api = Api(Client(), secret)
    revision_id = _save(api, env.team.slug, "token-draft", script=DUMP_ENV)
    _assert_withheld(_run(api, revision_id, django_capture_on_commit_callbacks), password, "draft")


def test_an_oauth_token_with_execute_gets_no_secret(
    env: Env, password: str, bwrap: str, django_capture_on_commit_callbacks: Any
) -> None:
    from tests.oauth.test_oauth_flow import Flow, register

    browser = Client()
    flow = Flow(browser, env.member, register(browser))
    requested = "skills:read skills:write skills:execute"
    flow.params = lambda **o: Flow.params(flow, **{"scope": requested, **o})  # type: ignore[method-assign]
    tokens = flow.connect(
        scopes=["skills:read", "skills:write", "skills:execute"], workspace=env.team.slug
    )
    api = Api(Client(), tokens["access_token"])
    revision_id = _save(api, env.team.slug, "oauth-draft", script=DUMP_ENV)
    _assert_withheld(_run(api, revision_id, django_capture_on_commit_callbacks), password, "draft")


def test_the_owner_running_a_proposal_gets_no_secret(
    env: Env,
    api_for: ApiFactory,
    password: str,
    bwrap: str,
    django_capture_on_commit_callbacks: Any,
) -> None:
    api = api_for(env.owner)
    revision_id = _save(api, env.team.slug, "owner-proposal", script=DUMP_ENV, intent="publish")
    assert SkillRevision.objects.get(revision_id=revision_id).state == "proposed"
    job = _run(api, revision_id, django_capture_on_commit_callbacks)
    _assert_withheld(job, password, "proposed")


def _published(env: Env, api: Api, slug: str, script: str) -> str:
    revision_id = _save(api, env.team.slug, slug, script=script, intent="publish")
    revision = SkillRevision.objects.get(revision_id=revision_id)
    revision_transition(actor=actor_for(env.admin), revision=revision, action="approve")
    assert SkillRevision.objects.get(revision_id=revision_id).state == "published"
    return revision_id


def test_the_published_revision_gets_the_secret_masked_in_result_and_progress(
    env: Env,
    api_for: ApiFactory,
    password: str,
    bwrap: str,
    django_capture_on_commit_callbacks: Any,
) -> None:
    api = api_for(env.member)
    revision_id = _published(env, api, "reviewed", DUMP_ENV)
    job = _run(api, revision_id, django_capture_on_commit_callbacks)
    assert job["state"] == "succeeded", job
    # The script had the value (it is the reviewed revision); the job shows only the mask.
    assert job["result"]["output"]["env"] == {"DB_PASSWORD": "***"}
    assert job["result"]["output"]["note"] == "password=***"
    assert "secrets_withheld" not in job["result"]
    row = Job.objects.get(job_id=job["job_id"])
    assert 'env {"DB_PASSWORD": "***"}' in row.log
    assert password not in json.dumps(job)
    assert password not in _stored(job["job_id"])


def test_the_secret_is_masked_in_the_error_of_a_failed_run(
    env: Env,
    api_for: ApiFactory,
    password: str,
    bwrap: str,
    django_capture_on_commit_callbacks: Any,
) -> None:
    api = api_for(env.member)
    revision_id = _published(env, api, "leaky", LEAK_AND_FAIL)
    job = _run(api, revision_id, django_capture_on_commit_callbacks)
    assert job["state"] == "failed", job
    assert "connecting with ***" in job["error"]["details"]["stderr_tail"]
    assert password not in json.dumps(job)
    assert password not in _stored(job["job_id"])
    assert "connecting with ***" in Job.objects.get(job_id=job["job_id"]).log


def test_in_a_personal_workspace_the_owners_draft_gets_its_secret_masked(
    env: Env, api_for: ApiFactory, bwrap: str, django_capture_on_commit_callbacks: Any
) -> None:
    api = api_for(env.owner)
    value = f"own-{uuid.uuid4().hex}"
    stored = api.put(f"/v1/workspaces/{env.personal.slug}/secrets/DB_PASSWORD", {"value": value})
    assert stored.status_code == 200, stored.content
    revision_id = _save(api, env.personal.slug, "own-draft", script=DUMP_ENV)
    job = _run(api, revision_id, django_capture_on_commit_callbacks)
    assert job["state"] == "succeeded", job
    assert job["result"]["output"]["env"] == {"DB_PASSWORD": "***"}
    assert value not in _stored(job["job_id"])
