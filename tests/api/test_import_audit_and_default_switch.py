"""Two promises without a test until now (docs/contract.md §2, §4):

* every import kind writes its audit entries — who (the actor), what (the file or URL, and the
  skills stored), through the same paths people use;
* with ``XMEMO_SKILLS_DEFAULT_ENABLED=0`` a new workspace (the personal one made with a user,
  and a new team) starts switched off and answers 403 FEATURE_DISABLED.
"""

from __future__ import annotations

import io
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from skills_app.models import AuditEntry, SkillRevision, Workspace
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env, make_user, personal_ws
from tests.formats.fakeserver import FakeServer, Handler, fake_server, respond
from tests.formats.helpers import FIXTURES, SKILL_MD, fixture_zip

pytestmark = pytest.mark.django_db

UPLOADS = {
    "import-skill-md": (SKILL_MD, "SKILL.md", "tiny"),
    "import-zip": (fixture_zip("incident-response"), "ir.zip", "incident-response"),
    "import-skill-json": (fixture_zip("disk-usage"), "du.zip", "disk-usage"),
}


def _entries(workspace: Workspace, action: str) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(workspace=workspace, action=action).order_by("id"))


def _assert_import_audited(
    env: Env, job_id: str, what: dict[str, Any], slug: str, source: str
) -> None:
    [start] = _entries(env.personal, "jobs.import.start")
    [finish] = _entries(env.personal, "jobs.import.finish")
    [created] = _entries(env.personal, "skills.revision.create")
    for entry in (start, finish, created):
        assert (entry.actor_id, entry.actor_label) == (env.owner.pk, env.owner.username)
    assert start.via == "api"  # from where: the request; the rest ran in the job
    assert (start.target_type, start.target_id) == ("job", job_id)
    assert what.items() <= start.data.items()
    assert (finish.target_type, finish.target_id, finish.data["skills"]) == ("job", job_id, [slug])
    revision = SkillRevision.objects.get()
    assert (created.target_id, created.data["source"]) == (revision.revision_id, source)
    assert revision.source == source


@pytest.mark.parametrize("source", sorted(UPLOADS))
def test_every_upload_kind_is_audited(
    env: Env, api_for: ApiFactory, django_capture_on_commit_callbacks: Any, source: str
) -> None:
    data, filename, slug = UPLOADS[source]
    api = api_for(env.owner)
    with django_capture_on_commit_callbacks(execute=True):
        started = api.client.post(
            "/v1/imports",
            {"file": SimpleUploadedFile(filename, data), "workspace": env.personal.slug},
            headers=api._headers(None),
        )
    job = api.get(f"/v1/jobs/{started.json()['job_id']}").json()
    assert job["state"] == "succeeded", job
    _assert_import_audited(env, job["job_id"], {"filename": filename}, slug, source)


@pytest.fixture
def raw_host(settings: Any) -> Iterator[FakeServer]:
    routes: dict[str, Handler] = {"/raw/SKILL.md": respond(200, SKILL_MD)}
    with fake_server(routes) as server:
        settings.XMEMO_IMPORT_ALLOWED_HOSTS = [server.host]
        settings.XMEMO_IMPORT_ALLOW_PRIVATE = True
        yield server


def test_a_url_import_is_audited_with_its_url(
    env: Env,
    api_for: ApiFactory,
    django_capture_on_commit_callbacks: Any,
    raw_host: FakeServer,
) -> None:
    api = api_for(env.owner)
    url = raw_host.url("/raw/SKILL.md")
    with django_capture_on_commit_callbacks(execute=True):
        started = api.post("/v1/imports", {"url": url, "workspace": env.personal.slug})
    job = api.get(f"/v1/jobs/{started.json()['job_id']}").json()
    assert job["state"] == "succeeded", job
    _assert_import_audited(env, job["job_id"], {"url": url}, "tiny", "import-url")


def test_the_directory_loader_is_audited_as_an_import(
    env: Env, tmp_path: Path, settings: Any
) -> None:
    root = tmp_path / "skills"
    shutil.copytree(FIXTURES / "incident-response", root / "incident-response")
    shutil.copytree(FIXTURES / "disk-usage", root / "disk-usage")
    settings.XMEMO_IMPORT_DIR_ROOTS = [str(root)]
    call_command(
        "import_skills_dir", str(root), "--workspace", env.personal.slug, stdout=io.StringIO()
    )
    [entry] = _entries(env.personal, "skills.import.directory")
    assert (entry.actor_id, entry.actor_label, entry.via) == (None, "system", "cli")
    assert entry.data == {
        "roots": [str(root)],
        "skills": ["disk-usage", "incident-response"],
    }
    assert len(_entries(env.personal, "skills.revision.create")) == 2


# --- XMEMO_SKILLS_DEFAULT_ENABLED=0 -------------------------------------------------------------


def test_with_the_default_off_new_workspaces_start_switched_off(
    api_for: ApiFactory, settings: Any
) -> None:
    settings.XMEMO_SKILLS_DEFAULT_ENABLED = False
    user = make_user("newcomer")
    personal = personal_ws(user)
    assert personal.cloud_skills_enabled is False
    api = api_for(user)
    created = api.post("/v1/workspaces", {"slug": "new-team", "name": "New team"})
    assert created.status_code == 201, created.content
    assert created.json()["cloud_skills_enabled"] is False
    assert Workspace.objects.get(slug="new-team").cloud_skills_enabled is False
    for ws in (personal.slug, "new-team"):
        listed = api.get("/v1/skills", {"workspace": ws})
        assert listed.status_code == 403, listed.content
        assert error_code(listed) == "FEATURE_DISABLED"
        saved = api.post(
            "/v1/skills/save",
            {
                "workspace": ws,
                "slug": "first",
                "name": "First",
                "description": "The first skill.",
                "instruction_body": "Do it.\n",
            },
        )
        assert saved.status_code == 403, saved.content
        assert error_code(saved) == "FEATURE_DISABLED"
    assert error_code(api.get("/v1/recall", {"query": "first"})) == "FEATURE_DISABLED"
    assert not SkillRevision.objects.exists()


def test_with_the_default_on_new_workspaces_start_switched_on(
    api_for: ApiFactory, settings: Any
) -> None:
    settings.XMEMO_SKILLS_DEFAULT_ENABLED = True
    user = make_user("newcomer")
    assert personal_ws(user).cloud_skills_enabled is True
    created = api_for(user).post("/v1/workspaces", {"slug": "new-team", "name": "New team"})
    assert created.json()["cloud_skills_enabled"] is True
