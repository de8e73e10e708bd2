"""The attack: a manifest ``schema`` whose ``$ref`` points at an internal address.

Checking a script's arguments must touch no network and no file (docs/contract.md §13): a
``$ref`` that is not local to the schema is refused at save time (REST save, SKILL.md import)
with 400 naming ``frontmatter.schema``, and again at execute time for a revision stored before
that rule. A local HTTP server records every request it gets: it must get none.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from unittest import mock

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from skills_app.domain.bundle import ComponentData
from skills_app.domain.skillmd import serialize_skill_md
from skills_app.models import Job, SkillRevision
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env, save
from tests.formats.fakeserver import FakeServer, fake_server, respond

# What the internal address answers: a schema that would turn any argument into an error
# message quoting this marker, if it were ever fetched.
INTERNAL = json.dumps({"type": "string", "const": "internal-marker-7f3a"}).encode()
SCRIPT = ComponentData("run.py", "script", b"import json; print(json.dumps({}))\n")


@pytest.fixture
def internal() -> Iterator[FakeServer]:
    with fake_server({"/x.json": respond(200, INTERNAL)}) as server:
        yield server


def _remote_schemas(server: FakeServer) -> list[dict[str, Any]]:
    return [
        {"type": "object", "properties": {"path": {"$ref": server.url("/x.json")}}},
        {"$ref": server.url("/x.json")},
        {"$defs": {"a": {"$ref": "x.json"}}, "properties": {"p": {"$ref": "#/$defs/a"}}},
        {"properties": {"p": {"$ref": "file:///etc/passwd"}}},
        {"items": {"$dynamicRef": server.url("/x.json#meta")}},
    ]


def _assert_refused(response: Any) -> None:
    assert response.status_code == 400, response.content
    assert error_code(response) == "VALIDATION_ERROR"
    assert response.json()["error"]["details"]["field"] == "frontmatter.schema"
    assert b"internal-marker" not in response.content


def test_a_remote_ref_is_refused_when_saved(
    env: Env, api_for: ApiFactory, internal: FakeServer
) -> None:
    api = api_for(env.member)
    for number, schema in enumerate(_remote_schemas(internal)):
        refused = api.post(
            "/v1/skills/save",
            {
                "workspace": env.team.slug,
                "slug": f"remote-ref-{number}",
                "name": "Remote ref",
                "description": "Its schema points elsewhere.",
                "instruction_body": "Run it.",
                "frontmatter": {"class": "safe", "schema": schema},
                "components": [
                    {"logical_path": "run.py", "type": "script", "content": "print('{}')"}
                ],
            },
        )
        _assert_refused(refused)
    assert not SkillRevision.objects.exists()
    assert internal.requests == []


def test_a_remote_ref_is_refused_when_imported(
    env: Env,
    api_for: ApiFactory,
    internal: FakeServer,
    django_capture_on_commit_callbacks: Any,
) -> None:
    api = api_for(env.owner)
    text = serialize_skill_md(
        {"name": "remote-ref", "description": "Imported.", "schema": _remote_schemas(internal)[0]},
        "Run it.\n",
    )
    with django_capture_on_commit_callbacks(execute=True):
        started = api.client.post(
            "/v1/imports",
            {
                "file": SimpleUploadedFile("SKILL.md", text.encode()),
                "workspace": env.personal.slug,
            },
            headers={"Authorization": f"Bearer {api.secret}"},
        )
    assert started.status_code == 202, started.content
    job = Job.objects.get(job_id=started.json()["job_id"])
    assert job.state == "failed", job.result
    assert job.error["code"] == "VALIDATION_ERROR"
    assert job.error["details"]["field"] == "frontmatter.schema"
    assert not SkillRevision.objects.exists()
    assert internal.requests == []


def test_a_revision_stored_before_the_rule_is_refused_at_execute_without_a_request(
    env: Env, api_for: ApiFactory, internal: FakeServer
) -> None:
    api = api_for(env.owner)
    for number, schema in enumerate(_remote_schemas(internal)):
        # Stored as a revision saved before the save-time check existed.
        with mock.patch("skills_app.domain.skillmd.schema_refs_check"):
            revision = save(
                env.owner,
                env.personal,
                slug=f"old-remote-ref-{number}",
                frontmatter={"schema": schema},
                components=(SCRIPT,),
            ).revision
        refused = api.post(
            f"/v1/revisions/{revision.revision_id}/execute",
            {"resource": "run.py", "args": {"path": "/"}},
        )
        _assert_refused(refused)
    assert internal.requests == []
    assert not Job.objects.exists()


def test_a_local_ref_still_validates(
    env: Env, api_for: ApiFactory, django_capture_on_commit_callbacks: Any
) -> None:
    schema = {
        "type": "object",
        "definitions": {"x": {"type": "integer", "maximum": 5}},
        "$defs": {"path": {"type": "string"}},
        "properties": {"top": {"$ref": "#/definitions/x"}, "path": {"$ref": "#/$defs/path"}},
    }
    revision = save(
        env.owner,
        env.personal,
        slug="local-ref",
        frontmatter={"schema": schema},
        components=(SCRIPT,),
    ).revision
    api = api_for(env.owner)
    with django_capture_on_commit_callbacks(execute=False):
        refused = api.post(
            f"/v1/revisions/{revision.revision_id}/execute",
            {"resource": "run.py", "args": {"top": 9, "path": "/"}},
        )
        started = api.post(
            f"/v1/revisions/{revision.revision_id}/execute",
            {"resource": "run.py", "args": {"top": 3, "path": "/"}},
        )
    assert refused.status_code == 400, refused.content
    assert refused.json()["error"]["details"]["field"] == "args.top"
    assert started.status_code == 202, started.content
