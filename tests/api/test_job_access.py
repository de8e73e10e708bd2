"""Who may read a job (docs/contract.md §2, §9, §13): a workspace export is for admins and owners,
an
execution's result for its creator and the workspace's admins and owners; anything else for any
member. A job the caller may not read answers 404 like a missing one, on every job endpoint."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from skills_app.models import Job
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env, publish


@pytest.fixture
def now(django_capture_on_commit_callbacks: Any) -> Callable[..., Any]:
    def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            return fn(*args, **kwargs)

    return call


def _reads(api_for: ApiFactory, user: User, job_id: str) -> tuple[int, int]:
    api = api_for(user)
    job = api.get(f"/v1/jobs/{job_id}")
    download = api.get(f"/v1/jobs/{job_id}/download")
    if job.status_code == 404:
        assert error_code(job) == "NOT_FOUND"
    if download.status_code == 404:
        assert error_code(download) == "NOT_FOUND"
    return job.status_code, download.status_code


def test_a_workspace_export_is_for_admins_and_owners_only(
    env: Env, api_for: ApiFactory, now: Callable[..., Any]
) -> None:
    publish(env.owner, env.team, slug="secret-runbook")
    started = now(api_for(env.admin).post, "/v1/exports", {"workspace": env.team.slug})
    assert started.status_code == 202, started.content
    job_id = started.json()["job_id"]
    assert _reads(api_for, env.admin, job_id) == (200, 200)  # its creator
    assert _reads(api_for, env.owner, job_id) == (200, 200)
    assert _reads(api_for, env.member, job_id) == (404, 404)
    assert _reads(api_for, env.outsider, job_id) == (404, 404)


def test_an_execution_result_is_for_its_creator_and_admins(env: Env, api_for: ApiFactory) -> None:
    revision = publish(env.owner, env.team, slug="tool").revision
    job = Job.objects.create(
        workspace=env.team,
        kind=Job.Kind.EXECUTE,
        state=Job.State.SUCCEEDED,
        params={"revision_id": revision.revision_id, "resource": "scripts/x.py"},
        result={"output": {"token": "from-a-secret"}},
        created_by=env.member2,
    )
    assert _reads(api_for, env.member2, job.job_id)[0] == 200  # its creator
    assert _reads(api_for, env.admin, job.job_id)[0] == 200
    assert _reads(api_for, env.owner, job.job_id)[0] == 200
    assert _reads(api_for, env.member, job.job_id) == (404, 404)
    # Not an export: nobody has a download of it.
    assert _reads(api_for, env.admin, job.job_id)[1] == 404


def test_a_members_import_and_revision_export_stay_readable_by_members(
    env: Env, api_for: ApiFactory, now: Callable[..., Any]
) -> None:
    revision = publish(env.owner, env.team, slug="shared").revision
    started = now(api_for(env.member2).post, "/v1/exports", {"revision_id": revision.revision_id})
    job_id = started.json()["job_id"]
    assert _reads(api_for, env.member, job_id) == (200, 200)
    assert _reads(api_for, env.outsider, job_id) == (404, 404)


def test_the_console_export_page_lists_only_jobs_the_viewer_may_open(
    env: Env, api_for: ApiFactory, now: Callable[..., Any]
) -> None:
    started = now(api_for(env.admin).post, "/v1/exports", {"workspace": env.team.slug})
    job_id = started.json()["job_id"]
    member, admin = Client(), Client()
    member.force_login(env.member)
    admin.force_login(env.admin)
    page = f"/w/{env.team.slug}/export/"
    assert job_id in admin.get(page).content.decode()
    assert job_id not in member.get(page).content.decode()
