"""Imports of text the database cannot store fail up front with a specific error naming the
field (docs/contract.md §3), not a vague JOB_FAILED from deep inside the save."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from skills_app.errors import ValidationFailed
from skills_app.formats.archive import zip_bundles_read
from skills_app.formats.capsule import capsule_write
from skills_app.formats.skillmd import skill_md_bundle_read
from skills_app.models import Skill
from tests.api.conftest import ApiFactory
from tests.factories import Env
from tests.formats.helpers import capsule_revision, fixture_zip

HEAD = b"---\nname: Hostile\ndescription: Breaks the store.\n"

HOSTILE = {
    "nul in the body": (HEAD + b"---\nBody \x00 here.\n", "instruction_body"),
    "nul escape in a yaml value": (HEAD + b'note: "a\\0b"\n---\nBody.\n', "note"),
    "nul escape in a yaml key": (HEAD + b'"no\\0te": 1\n---\nBody.\n', "frontmatter"),
    "raw nul in the yaml": (HEAD + b"note: a\x00b\n---\nBody.\n", "frontmatter"),
    "integer over 4300 digits": (HEAD + b"big: " + b"9" * 5000 + b"\n---\nBody.\n", "frontmatter"),
    "surrogate key": (HEAD + b'"\\ud800": 1\n---\nBody.\n', "frontmatter"),
    "surrogate value": (HEAD + b'note: "\\udfff"\n---\nBody.\n', "note"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_skill_md_reader_refuses_unstorable_text(case: str) -> None:
    data, field = HOSTILE[case]
    with pytest.raises(ValidationFailed) as refused:
        skill_md_bundle_read(data)
    assert field in str(refused.value.details.get("field", "")) + refused.value.message
    # The answer itself must be encodable: it is sent as UTF-8 JSON.
    json.dumps(refused.value.as_dict(), ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_import_job_fails_with_a_validation_error(
    case: str,
    env: Env,
    api_for: ApiFactory,
    django_capture_on_commit_callbacks: Any,
) -> None:
    api = api_for(env.owner)
    data, _ = HOSTILE[case]
    with django_capture_on_commit_callbacks(execute=True):
        started = api.client.post(
            "/v1/imports",
            {"file": SimpleUploadedFile("SKILL.md", data), "workspace": env.personal.slug},
            headers=api._headers(None),
        )
    assert started.status_code == 202, started.content
    job = api.get(f"/v1/jobs/{started.json()['job_id']}").json()
    assert job["state"] == "failed", job
    assert job["error"]["code"] == "VALIDATION_ERROR", job
    assert not Skill.objects.exists()


def _capsule_with_media_type(media_type: str) -> bytes:
    """A valid exported capsule whose manifest then gets a hostile media_type (it is not part
    of the canonical hash, so nothing else notices)."""
    [bundle] = zip_bundles_read(fixture_zip("incident-response"))
    capsule = capsule_write(capsule_revision(replace(bundle, slug="incident-response")))
    source = zipfile.ZipFile(io.BytesIO(capsule))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "capsule.json":
                manifest = json.loads(data)
                manifest["components"][0]["media_type"] = media_type
                data = json.dumps(manifest).encode()
            target.writestr(info, data)
    return out.getvalue()


@pytest.mark.parametrize(
    "media_type",
    ["text/plain\r\nX-Injected: 1", "text/" + "x" * 130, "notatype", "text/plain; x=\n", ""],
)
def test_capsule_media_type_is_validated(
    media_type: str,
    env: Env,
    api_for: ApiFactory,
    django_capture_on_commit_callbacks: Callable[..., Any],
) -> None:
    api = api_for(env.owner)
    with django_capture_on_commit_callbacks(execute=True):
        started = api.client.post(
            "/v1/imports",
            {
                "file": SimpleUploadedFile("c.zip", _capsule_with_media_type(media_type)),
                "workspace": env.personal.slug,
            },
            headers=api._headers(None),
        )
    job = api.get(f"/v1/jobs/{started.json()['job_id']}").json()
    assert job["state"] == "failed", job
    assert job["error"]["code"] == "VALIDATION_ERROR", job
    assert job["error"]["details"].get("field") == "media_type", job
    assert not Skill.objects.exists()


def test_capsule_with_a_parameterised_media_type_still_imports(
    env: Env,
    api_for: ApiFactory,
    django_capture_on_commit_callbacks: Callable[..., Any],
) -> None:
    api = api_for(env.owner)
    with django_capture_on_commit_callbacks(execute=True):
        started = api.client.post(
            "/v1/imports",
            {
                "file": SimpleUploadedFile(
                    "c.zip", _capsule_with_media_type("text/markdown; charset=utf-8")
                ),
                "workspace": env.personal.slug,
            },
            headers=api._headers(None),
        )
    job = api.get(f"/v1/jobs/{started.json()['job_id']}").json()
    assert job["state"] == "succeeded", job
