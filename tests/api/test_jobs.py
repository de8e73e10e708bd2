"""POST /v1/imports, /v1/exports, /v1/revisions/{id}/execute and GET /v1/jobs/{id}[/download]."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from skills_app.domain.bundle import ComponentData
from skills_app.models import Job, Skill, SkillRevision
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env, save
from tests.formats.fakeserver import FakeServer, Handler, commit_lookup, fake_server, respond
from tests.formats.helpers import fixture_zip

GITHUB_SHA = "89abcdef0123456789abcdef0123456789abcdef"

JOB_KEYS = {"job_id", "kind", "state", "workspace", "progress", "result", "error", "log"}
SKILL_MD = b"---\nname: Uploaded\ndescription: From a file.\n---\nBody.\n"


@pytest.fixture
def now(django_capture_on_commit_callbacks: Any) -> Callable[..., Any]:
    """Call an endpoint and run the job it queued before returning, as the embedded mode does."""

    def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        with django_capture_on_commit_callbacks(execute=True):
            return fn(*args, **kwargs)

    return call


def _upload(api: Any, data: bytes, name: str, **fields: str) -> Any:
    return api.client.post(
        "/v1/imports",
        {"file": SimpleUploadedFile(name, data), **fields},
        headers=api._headers(None),
    )


def test_upload_import_answers_202_and_the_job_finishes(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    with_callbacks = _upload(
        api, SKILL_MD, "SKILL.md", workspace=env.personal.slug, intent="publish"
    )
    assert with_callbacks.status_code == 202, with_callbacks.content
    body = with_callbacks.json()
    assert set(body) >= JOB_KEYS
    assert (body["kind"], body["state"]) == ("import", "queued")
    assert body["job_id"].startswith("job_")


def test_import_then_poll_then_export_then_download(
    env: Env, api_for: ApiFactory, now: Callable[..., Any]
) -> None:
    api = api_for(env.owner)
    started = now(
        _upload, api, fixture_zip("incident-response"), "ir.zip", workspace=env.personal.slug
    )
    job = api.get(f"/v1/jobs/{started.json()['job_id']}").json()
    assert job["state"] == "succeeded", job
    assert set(job["result"]) >= {"skill_id", "revision_id", "canonical_hash"}
    assert job["progress"] == {"done": 1, "total": 1}
    revision_id = job["result"]["revision_id"]

    export = now(api.post, "/v1/exports", {"revision_id": revision_id})
    assert export.status_code == 202
    done = api.get(f"/v1/jobs/{export.json()['job_id']}").json()
    assert done["state"] == "succeeded", done
    download = api.get(done["result"]["download_url"])
    assert download.status_code == 200
    assert download["Content-Type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(download.content)).namelist()
    assert names[:2] == ["capsule.json", "SKILL.md"]
    assert len(download.content) == done["result"]["size"]


def test_failed_import_reports_the_error_envelope(
    env: Env, api_for: ApiFactory, now: Callable[..., Any]
) -> None:
    api = api_for(env.owner)
    unknown = _upload(api, b"not a zip or markdown", "x.exe", workspace=env.personal.slug)
    assert (unknown.status_code, error_code(unknown)) == (415, "UNSUPPORTED_FORMAT")
    bad = b"---\nname: [unclosed\n---\nbody\n"
    started = now(_upload, api, bad, "SKILL.md", workspace=env.personal.slug)
    job = api.get(f"/v1/jobs/{started.json()['job_id']}").json()
    assert job["state"] == "failed"
    assert set(job["error"]) == {"code", "message", "details"}
    assert job["error"]["code"] == "VALIDATION_ERROR"
    assert not Skill.objects.exists()


@pytest.fixture
def github(settings: Any) -> Iterator[FakeServer]:
    routes: dict[str, Handler] = {}
    with fake_server(routes) as server:
        routes["/api/repos/acme/skills/commits/main"] = commit_lookup(GITHUB_SHA)
        routes[f"/codeload/acme/skills/zip/{GITHUB_SHA}"] = respond(
            200, fixture_zip("incident-response", prefix="skills-main/incident-response")
        )
        settings.XMEMO_GITHUB_CODELOAD_URL = server.url("/codeload/")
        settings.XMEMO_GITHUB_API_URL = server.url("/api")
        settings.XMEMO_IMPORT_ALLOWED_HOSTS = ["github.com", server.host]
        settings.XMEMO_IMPORT_ALLOW_PRIVATE = True
        yield server


def test_url_import_against_a_local_fake_github(
    env: Env, api_for: ApiFactory, github: FakeServer, now: Callable[..., Any]
) -> None:
    api = api_for(env.owner)
    url = "https://github.com/acme/skills/tree/main/incident-response"
    started = now(api.post, "/v1/imports", {"url": url, "workspace": env.personal.slug})
    assert started.status_code == 202, started.content
    job = api.get(f"/v1/jobs/{started.json()['job_id']}").json()
    assert job["state"] == "succeeded", job
    revision = SkillRevision.objects.get(revision_id=job["result"]["revision_id"])
    assert (revision.source, revision.source_ref) == ("import-url", f"{url}#commit={GITHUB_SHA}")


def test_url_import_off_the_allowlist_fails_without_fetching(
    env: Env, api_for: ApiFactory, github: FakeServer, settings: Any, now: Callable[..., Any]
) -> None:
    settings.XMEMO_IMPORT_ALLOWED_HOSTS = ["github.com"]
    api = api_for(env.owner)
    started = now(
        api.post,
        "/v1/imports",
        {
            "url": github.url(f"/codeload/acme/skills/zip/{GITHUB_SHA}"),
            "workspace": env.personal.slug,
        },
    )
    job = api.get(f"/v1/jobs/{started.json()['job_id']}").json()
    assert (job["state"], job["error"]["code"]) == ("failed", "IMPORT_HOST_NOT_ALLOWED")
    assert github.requests == []


def test_export_needs_exactly_one_target(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    assert error_code(api.post("/v1/exports", {})) == "VALIDATION_ERROR"
    rev = save(env.owner, env.personal).revision
    both = api.post("/v1/exports", {"revision_id": rev.revision_id, "workspace": env.personal.slug})
    assert error_code(both) == "VALIDATION_ERROR"


def test_download_before_the_export_finished_is_a_conflict(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    rev = save(env.owner, env.personal).revision
    started = api.post("/v1/exports", {"revision_id": rev.revision_id})  # not run: no callbacks
    response = api.get(f"/v1/jobs/{started.json()['job_id']}/download")
    assert response.status_code == 409
    assert error_code(response) == "CONFLICT"


def test_member_cannot_export_the_workspace_and_strangers_see_nothing(
    env: Env, api_for: ApiFactory
) -> None:
    response = api_for(env.member).post("/v1/exports", {"workspace": env.team.slug})
    assert (response.status_code, error_code(response)) == (403, "PERMISSION_DENIED")
    job = api_for(env.owner).post("/v1/exports", {"workspace": env.team.slug}).json()
    stranger = api_for(env.outsider)
    assert stranger.get(f"/v1/jobs/{job['job_id']}").status_code == 404
    assert stranger.post("/v1/exports", {"workspace": env.team.slug}).status_code == 404


def test_import_needs_write_scope(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner, scopes=["skills:read"])
    response = _upload(api, SKILL_MD, "SKILL.md", workspace=env.personal.slug)
    assert (response.status_code, error_code(response)) == (403, "PERMISSION_DENIED")


SHELL_SCRIPT = b'#!/bin/sh\nread -r line\nprintf \'{"shell": %s}\' "$line"\n'
PYTHON_SCRIPT = b"import json,sys\nprint(json.dumps({'got': json.load(sys.stdin)}))\n"


@pytest.mark.parametrize(
    ("path", "script", "expected"),
    [
        ("scripts/echo.py", PYTHON_SCRIPT, {"got": {"x": 1}}),
        ("scripts/echo.sh", SHELL_SCRIPT, {"shell": {"x": 1}}),
    ],
)
def test_execute_through_the_api(
    env: Env,
    api_for: ApiFactory,
    bwrap: str,
    now: Callable[..., Any],
    path: str,
    script: bytes,
    expected: dict[str, Any],
) -> None:
    rev = save(
        env.owner, env.personal, components=(ComponentData(path, "script", script),)
    ).revision
    api = api_for(env.owner)
    started = now(
        api.post, f"/v1/revisions/{rev.revision_id}/execute", {"resource": path, "args": {"x": 1}}
    )
    assert started.status_code == 202, started.content
    job = api.get(f"/v1/jobs/{started.json()['job_id']}").json()
    assert job["state"] == "succeeded", job
    assert job["result"]["output"] == expected
    no_scope = api_for(env.owner, scopes=["skills:read", "skills:write"])
    refused = no_scope.post(f"/v1/revisions/{rev.revision_id}/execute", {"resource": path})
    assert (refused.status_code, error_code(refused)) == (403, "PERMISSION_DENIED")


def test_deleting_a_skill_erases_every_copy_jobs_hold(
    env: Env, api_for: ApiFactory, now: Callable[..., Any]
) -> None:
    """Uploaded archives, export files and execution outputs of a deleted skill are erased in
    the delete's transaction; their downloads answer 404. Other skills' jobs are untouched."""
    api = api_for(env.owner)
    ws = env.personal.slug
    imported = now(_upload, api, fixture_zip("incident-response"), "ir.zip", workspace=ws)
    result = api.get(f"/v1/jobs/{imported.json()['job_id']}").json()["result"]
    skill_id, revision_id = result["skill_id"], result["revision_id"]
    other = save(env.owner, env.personal, slug="other").revision

    def export(target: dict[str, str]) -> str:
        started = now(api.post, "/v1/exports", target)
        job = api.get(f"/v1/jobs/{started.json()['job_id']}").json()
        assert api.get(job["result"]["download_url"]).status_code == 200
        return str(job["job_id"])

    exports = [
        export({"revision_id": revision_id}),
        export({"skill_id": skill_id}),
        export({"workspace": ws}),
    ]
    kept = export({"revision_id": other.revision_id})
    execution = Job.objects.create(
        workspace=env.personal,
        kind=Job.Kind.EXECUTE,
        state=Job.State.SUCCEEDED,
        params={"revision_id": revision_id, "resource": "scripts/x.py", "args": {}},
        result={"output": {"secret": "derived from the skill"}},
        log="stderr line from the script\n",
    )

    assert api.post(f"/v1/skills/{skill_id}/archive").status_code == 200
    assert api.delete(f"/v1/skills/{skill_id}").status_code == 204

    for job_id in exports:
        gone = api.get(f"/v1/jobs/{job_id}/download")
        assert gone.status_code == 404, gone.content
        assert error_code(gone) == "NOT_FOUND"
    erased = Job.objects.filter(job_id__in=[*exports, imported.json()["job_id"]])
    assert set(erased.values_list("input_data", "output_data")) == {(None, None)}
    assert erased.count() == 4
    execution.refresh_from_db()
    assert (execution.result, execution.log) == (None, "")
    assert api.get(f"/v1/jobs/{kept}/download").status_code == 200


def _restore(api: Any, ws: str, data: bytes) -> Any:
    return api.client.post(
        f"/v1/workspaces/{ws}/restore",
        {"file": SimpleUploadedFile("backup.zip", data)},
        headers=api._headers(None),
    )


def test_workspace_export_downloads_a_backup_that_restores_over_the_api(
    env: Env, api_for: ApiFactory, now: Callable[..., Any]
) -> None:
    save(env.owner, env.team, slug="kept", intent="publish")
    owner = api_for(env.owner)
    started = now(owner.post, "/v1/exports", {"workspace": env.team.slug})
    job = owner.get(f"/v1/jobs/{started.json()['job_id']}").json()
    backup = owner.get(job["result"]["download_url"]).content
    assert job["result"]["filename"] == f"{env.team.slug}-backup.zip"

    assert owner.post("/v1/workspaces", {"slug": "fresh", "name": "Fresh"}).status_code == 201
    assert error_code(_restore(api_for(env.member), env.team.slug, backup)) == "PERMISSION_DENIED"
    assert _restore(api_for(env.outsider), "fresh", backup).status_code == 404
    assert error_code(_restore(owner, env.team.slug, backup)) == "CONFLICT"  # not empty

    refused = now(_restore, owner, "fresh", backup[:-100])  # truncated: refused at the door
    assert (refused.status_code, error_code(refused)) == (415, "UNSUPPORTED_FORMAT")
    assert not Job.objects.filter(kind="restore").exists()
    assert not Skill.objects.filter(workspace__slug="fresh").exists()

    restored = now(_restore, owner, "fresh", backup)
    assert restored.status_code == 202, restored.content
    assert restored.json()["kind"] == "restore"
    done = owner.get(f"/v1/jobs/{restored.json()['job_id']}").json()
    assert done["state"] == "succeeded", done
    assert done["progress"] == {"done": 1, "total": 1}
    listed = owner.get("/v1/skills", {"workspace": "fresh"}).json()
    (skill,) = listed["results"]
    assert skill["slug"] == "kept"
    original = SkillRevision.objects.get(skill__workspace=env.team, skill__slug="kept")
    copy = SkillRevision.objects.get(skill__workspace__slug="fresh", skill__slug="kept")
    assert (copy.canonical_hash, copy.state) == (original.canonical_hash, original.state)
