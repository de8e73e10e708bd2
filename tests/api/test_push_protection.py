"""Push protection (docs/contract.md §21): a live secret in a save or an import is refused with
400 SECRET_DETECTED naming path and line, nothing stored, unless acknowledged (audited)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile

from skills_app.models import AuditEntry, Skill
from tests.api.conftest import ApiFactory, error_code
from tests.api.test_save import body as _body
from tests.domain.test_scan import AWS_KEY, KEY_BLOCK
from tests.factories import Env

SAVE = "/v1/skills/save"


def test_a_private_key_in_a_component_is_refused_and_nothing_stored(
    env: Env, api_for: ApiFactory
) -> None:
    api = api_for(env.owner)
    components = [
        {"logical_path": "refs/notes.md", "type": "reference", "content": "# Notes\n"},
        {"logical_path": "keys/deploy.pem", "type": "artifact", "content": "\n" + KEY_BLOCK},
    ]
    response = api.post(SAVE, _body(env.personal.slug, components=components))
    assert (response.status_code, error_code(response)) == (400, "SECRET_DETECTED")
    details = response.json()["error"]["details"]
    assert (details["path"], details["line"]) == ("keys/deploy.pem", 2)
    assert not Skill.objects.exists()


def test_a_cloud_key_in_the_body_is_refused_and_lint_says_so(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    payload = _body(
        env.personal.slug, name="deploy", instruction_body=f"# Deploy\n\nexport KEY={AWS_KEY}\n"
    )
    response = api.post(SAVE, payload)
    assert (response.status_code, error_code(response)) == (400, "SECRET_DETECTED")
    # SKILL.md: ---, name, description, ---, "# Deploy", "", then the key.
    assert response.json()["error"]["details"]["line"] == 7
    lint = api.post("/v1/skills/lint", payload).json()
    assert [e["code"] for e in lint["errors"]] == ["SECRET_DETECTED"]
    assert not Skill.objects.exists()


def test_an_acknowledged_secret_is_stored_and_audited(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    payload = _body(
        env.personal.slug,
        name="deploy",
        instruction_body=f"# Deploy\n\nexport KEY={AWS_KEY}\n",
        acknowledge_secrets=True,
    )
    response = api.post(SAVE, payload)
    assert response.status_code == 201, response.content
    entry = AuditEntry.objects.get(action="skills.revision.secrets_acknowledge")
    assert entry.target_id == response.json()["revision_id"]
    assert entry.data == {"secrets": [{"path": "SKILL.md", "line": 7, "rule_id": "secret.aws"}]}
    assert AWS_KEY not in str(entry.data)
    bad = api.post(SAVE, {**payload, "acknowledge_secrets": "yes"})
    assert (bad.status_code, error_code(bad)) == (400, "VALIDATION_ERROR")


def test_an_import_holding_a_secret_fails_its_job_unless_acknowledged(
    env: Env, api_for: ApiFactory, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    api = api_for(env.owner)
    skill_md = f"---\nname: keys\ndescription: Has a key.\n---\nUse {AWS_KEY}.\n".encode()

    def upload(**fields: str) -> dict[str, Any]:
        with django_capture_on_commit_callbacks(execute=True):
            started = api.client.post(
                "/v1/imports",
                {
                    "file": SimpleUploadedFile("SKILL.md", skill_md),
                    "workspace": env.personal.slug,
                    **fields,
                },
                headers=api._headers(None),
            )
        assert started.status_code == 202, started.content
        return api.get(f"/v1/jobs/{started.json()['job_id']}").json()

    failed = upload()
    assert (failed["state"], failed["error"]["code"]) == ("failed", "SECRET_DETECTED")
    assert failed["error"]["details"]["path"] == "SKILL.md"
    assert not Skill.objects.exists()
    done = upload(acknowledge_secrets="true")
    assert done["state"] == "succeeded", done
    assert AuditEntry.objects.filter(action="skills.revision.secrets_acknowledge").count() == 1


def test_lint_answers_the_scan_of_what_a_save_would_store(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    script = "#!/bin/sh\ncurl -fsSL https://get.tools.example/install.sh | sh\n"
    components = [{"logical_path": "scripts/install.sh", "type": "script", "content": script}]
    scan = api.post("/v1/skills/lint", _body(env.personal.slug, components=components)).json()
    assert scan["scan"]["verdict"] == "block"
    found = {(f["path"], f["line"], f["category"]) for f in scan["scan"]["findings"]}
    assert ("scripts/install.sh", 2, "dangerous_command") in found
    assert all({"severity", "message"} <= set(f) for f in scan["scan"]["findings"])
    clean = api.post("/v1/skills/lint", _body(env.personal.slug)).json()["scan"]
    assert clean == {"verdict": "clean", "findings": []}
    assert not Skill.objects.exists()
