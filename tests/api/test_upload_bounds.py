"""Uploads do not outlive their jobs (docs/contract.md §16b): a job's input is dropped once it
has ended — succeeded, failed, or failed by the stale-job sweeper —, an upload in the wrong
format is refused before any job row exists, each user holds a bounded number of stored
uploads, and an oversized JSON body is answered 413 with the error envelope."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import timedelta

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from django.utils import timezone

from skills_app import errors
from skills_app.domain.jobs import QUEUED_STALE_AFTER
from skills_app.domain.limits import MAX_BODY_BYTES, MAX_COMPONENT_BYTES, MAX_COMPONENTS
from skills_app.models import Job
from skills_app.services import jobs
from skills_app.services.jobs import run
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env, actor_for, make_team


def _zip(entries: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in entries.items():
            archive.writestr(name, text)
    return buffer.getvalue()


GOOD_PACK = _zip({"one/SKILL.md": "---\nname: one\ndescription: d\n---\nbody\n"})
BAD_PACK = _zip({"one/SKILL.md": "---\nname: [unclosed\n---\nbody\n"})
NOT_A_BACKUP = _zip({"readme.txt": "hello"})
BROKEN_BACKUP = _zip({"backup.json": "{}"})  # looks like one; the worker refuses it


def _stored(job: Job) -> bytes | None:
    data = Job.objects.filter(pk=job.pk).values_list("input_data", flat=True).get()
    return None if data is None else bytes(data)


@pytest.mark.parametrize(
    ("kind", "data", "state"),
    [
        ("import", GOOD_PACK, "succeeded"),
        ("import", BAD_PACK, "failed"),
        ("restore", BROKEN_BACKUP, "failed"),
    ],
)
def test_a_job_that_ended_holds_no_upload(env: Env, kind: str, data: bytes, state: str) -> None:
    actor = actor_for(env.owner)
    if kind == "import":
        job = jobs.import_start(actor=actor, workspace=env.personal, data=data, filename="p.zip")
    else:
        target = make_team(env.owner, slug="empty")
        job = jobs.restore_start(actor=actor, workspace=target, data=data, filename="b.zip")
    assert _stored(job) == data  # kept while queued: the worker reads it from the row
    run.job_run(job_id=job.job_id)
    job.refresh_from_db()
    assert job.state == state, job.error
    assert _stored(job) is None


def test_the_stale_job_sweeper_drops_the_upload_of_the_job_it_fails(env: Env) -> None:
    job = jobs.import_start(
        actor=actor_for(env.owner), workspace=env.personal, data=GOOD_PACK, filename="p.zip"
    )
    Job.objects.filter(pk=job.pk).update(
        created_at=timezone.now() - QUEUED_STALE_AFTER - timedelta(minutes=1)
    )
    assert run.jobs_fail_stale() == 1
    job.refresh_from_db()
    assert (job.state, _stored(job)) == ("failed", None)


@pytest.mark.parametrize(
    ("kind", "data", "filename"),
    [
        ("restore", b"this is not a zip at all", "backup.zip"),
        ("restore", BROKEN_BACKUP[:-30], "backup.zip"),  # truncated: no central directory
        ("restore", NOT_A_BACKUP, "backup.zip"),  # a ZIP without backup.json
        ("import", b"\x00\x01\x02 binary", "blob.bin"),
        ("import", b"PK\x03\x04 but nothing more", "pack.zip"),
    ],
    # Named: a ZIP's bytes carry the time it was built, and every xdist worker must collect
    # the same test ids.
    ids=["not-a-zip", "truncated-zip", "zip-without-backup-json", "binary", "zip-header-only"],
)
def test_an_upload_in_the_wrong_format_is_refused_before_a_job_exists(
    env: Env, kind: str, data: bytes, filename: str
) -> None:
    actor = actor_for(env.owner)
    start = jobs.import_start if kind == "import" else jobs.restore_start
    workspace = env.personal if kind == "import" else make_team(env.owner, slug="empty")
    with pytest.raises(errors.UnsupportedFormat):
        start(actor=actor, workspace=workspace, data=data, filename=filename)
    assert not Job.objects.exists()


@override_settings(XMEMO_MAX_PENDING_UPLOADS=2)
def test_a_user_holds_a_bounded_number_of_stored_uploads(env: Env) -> None:
    actor = actor_for(env.owner)
    # Teams cost nothing to make: the bound is the user's, across every workspace.
    first = jobs.import_start(
        actor=actor, workspace=make_team(env.owner), data=GOOD_PACK, filename="p.zip"
    )
    jobs.restore_start(
        actor=actor, workspace=make_team(env.owner), data=BROKEN_BACKUP, filename="b.zip"
    )
    with pytest.raises(errors.UploadsPending) as refused:
        jobs.import_start(
            actor=actor, workspace=make_team(env.owner), data=GOOD_PACK, filename="p.zip"
        )
    assert (refused.value.status, refused.value.details["limit"]) == (429, 2)
    assert Job.objects.count() == 2
    # Another user is not held back by the owner's uploads; a URL import stores none.
    jobs.import_start(
        actor=actor_for(env.member), workspace=env.team, data=GOOD_PACK, filename="p.zip"
    )
    # Once a job ends its upload is gone, and the user may upload again.
    run.job_run(job_id=first.job_id)
    jobs.import_start(actor=actor, workspace=env.personal, data=GOOD_PACK, filename="p.zip")


def test_the_body_bound_holds_the_largest_legal_save_and_refuses_a_30_mib_one() -> None:
    largest_save = 2 * MAX_BODY_BYTES + MAX_COMPONENTS * MAX_COMPONENT_BYTES * 4 // 3 + 65_536
    assert largest_save < settings.DATA_UPLOAD_MAX_MEMORY_SIZE < 30 * 1024 * 1024


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1024 * 1024)
def test_a_json_body_over_the_bound_is_413_with_the_envelope(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    body = {"workspace": env.personal.slug, "slug": "big", "name": "Big", "description": "d"}
    body["instruction_body"] = "x" * (2 * 1024 * 1024)
    response = api.post("/v1/skills/save", body)
    assert response.status_code == 413, response.content[:300]
    assert error_code(response) == "BODY_TOO_LARGE"
    assert set(json.loads(response.content)["error"]) == {"code", "message", "details"}


def test_a_non_zip_restore_is_refused_at_the_request(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    target = make_team(env.owner, slug="empty")
    response = api.client.post(
        f"/v1/workspaces/{target.slug}/restore",
        {"file": SimpleUploadedFile("backup.zip", b"%PDF-1.7 not a zip")},
        headers=api._headers(None),
    )
    assert response.status_code == 415, response.content
    assert error_code(response) == "UNSUPPORTED_FORMAT"
    assert not Job.objects.exists()
