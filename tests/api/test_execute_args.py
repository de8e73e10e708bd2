"""Execution args meet the manifest: a skill.json's ``schema`` is enforced before anything is
queued or run (docs/contract.md §13)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from skills_app.domain.bundle import ComponentData
from skills_app.models import Job, SkillRevision
from tests.api.conftest import Api, ApiFactory, error_code
from tests.factories import Env, save
from tests.formats.helpers import fixture_zip


def _imported_disk_usage(api: Api, workspace: str, capture: Any) -> SkillRevision:
    """disk-usage's skill.json declares {path: string (required), top: integer 1..50}."""
    with capture(execute=True):
        started = api.client.post(
            "/v1/imports",
            {
                "file": SimpleUploadedFile("du.zip", fixture_zip("disk-usage")),
                "workspace": workspace,
            },
            headers={"Authorization": f"Bearer {api.secret}"},
        )
    assert started.status_code == 202, started.content
    job = Job.objects.get(job_id=started.json()["job_id"])
    assert job.state == "succeeded", job.error
    return SkillRevision.objects.get(revision_id=job.result["revision_id"])


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({}, "path"),
        ({"path": "/skill", "top": "many"}, "top"),
        ({"path": "/skill", "top": 500}, "top"),
        ({"path": ["/etc"]}, "path"),
    ],
)
def test_args_that_break_the_manifest_schema_are_refused_before_anything_runs(
    env: Env,
    api_for: ApiFactory,
    django_capture_on_commit_callbacks: Any,
    args: dict[str, Any],
    field: str,
) -> None:
    api = api_for(env.owner)
    revision = _imported_disk_usage(api, env.personal.slug, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=False) as queued:
        refused = api.post(
            f"/v1/revisions/{revision.revision_id}/execute", {"resource": "du.py", "args": args}
        )
    assert refused.status_code == 400, refused.content
    assert error_code(refused) == "VALIDATION_ERROR"
    assert refused.json()["error"]["details"]["field"] == f"args.{field}"
    assert not Job.objects.filter(kind=Job.Kind.EXECUTE).exists()
    assert queued == []


def test_args_that_meet_the_schema_are_queued(
    env: Env, api_for: ApiFactory, django_capture_on_commit_callbacks: Any
) -> None:
    api = api_for(env.owner)
    revision = _imported_disk_usage(api, env.personal.slug, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=False) as queued:
        started = api.post(
            f"/v1/revisions/{revision.revision_id}/execute",
            {"resource": "du.py", "args": {"path": "/skill", "top": 3}},
        )
    assert started.status_code == 202, started.content
    assert Job.objects.filter(kind=Job.Kind.EXECUTE).count() == 1
    assert len(queued) == 1


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"path": {"type": "bogus"}}},
        {"$ref": "#/$defs/not-in-this-schema"},
    ],
)
def test_a_broken_manifest_schema_is_the_authors_error_not_a_500(
    env: Env, api_for: ApiFactory, schema: dict[str, Any]
) -> None:
    revision = save(
        env.owner,
        env.personal,
        slug="broken-schema",
        frontmatter={"schema": schema},
        components=(ComponentData("run.py", "script", b"print('{}')\n"),),
    ).revision
    refused = api_for(env.owner).post(
        f"/v1/revisions/{revision.revision_id}/execute",
        {"resource": "run.py", "args": {"path": "/"}},
    )
    assert refused.status_code == 400, refused.content
    assert error_code(refused) == "VALIDATION_ERROR"
    assert refused.json()["error"]["details"]["field"] == "frontmatter.schema"
    assert not Job.objects.exists()
