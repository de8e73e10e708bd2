"""Import and export jobs through the services, run in-process (the embedded default's mode).

The same paths on a real Celery worker over Redis are covered by tests/e2e.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from typing import Any

import pytest

from skills_app import errors
from skills_app.models import AuditEntry, Blob, Job, Skill, SkillRevision
from skills_app.services.jobs import export_start, import_start
from skills_app.services.jobs.run import job_run
from tests.factories import Env, actor_for, save
from tests.formats.helpers import FIXTURE_NAMES, FIXTURES, fixture_zip, zip_of

SKILL_MD = (
    b"---\nname: Tiny skill\ndescription: A tiny skill.\n"
    b"license: MIT\nx-custom: kept\n---\nDo it.\n"
)


def _output(job: Job) -> bytes:
    data = Job.objects.values_list("output_data", flat=True).get(pk=job.pk)
    assert data is not None
    return bytes(data)


@pytest.fixture
def run_now(django_capture_on_commit_callbacks: Any) -> Callable[..., Job]:
    """Start a job and run its queued task in-process, as the embedded default does."""

    def start(fn: Callable[..., Job], **kwargs: Any) -> Job:
        with django_capture_on_commit_callbacks(execute=True):
            job = fn(**kwargs)
        job.refresh_from_db()
        return job

    return start


def test_skill_md_upload_imports_and_keeps_unknown_frontmatter(
    env: Env, run_now: Callable[..., Job]
) -> None:
    job = run_now(
        import_start,
        actor=actor_for(env.owner),
        workspace=env.personal,
        data=SKILL_MD,
        filename="SKILL.md",
    )
    assert job.state == "succeeded", job.error
    rev = SkillRevision.objects.get(revision_id=job.result["revision_id"])
    assert rev.frontmatter == {"license": "MIT", "x-custom": "kept"}
    assert rev.instruction_body == "Do it.\n"
    assert rev.source == "import-skill-md"
    assert rev.skill.slug == "tiny-skill"
    assert job.result["canonical_hash"] == rev.canonical_hash
    assert (job.progress_done, job.progress_total) == (1, 1)


@pytest.mark.parametrize("name", [n for n in FIXTURE_NAMES if (FIXTURES / n / "SKILL.md").exists()])
def test_import_export_import_is_lossless_and_deterministic(
    env: Env, run_now: Callable[..., Job], name: str
) -> None:
    actor = actor_for(env.owner)
    first = run_now(
        import_start,
        actor=actor,
        workspace=env.personal,
        data=fixture_zip(name),
        filename=f"{name}.zip",
    )
    assert first.state == "succeeded", first.error
    rev = SkillRevision.objects.get(revision_id=first.result["revision_id"])
    exports = [run_now(export_start, actor=actor, revision=rev) for _ in range(2)]
    blobs = [_output(e) for e in exports]
    assert blobs[0] == blobs[1], "the same revision must export byte-identical ZIPs"
    assert exports[0].result["download_url"] == f"/v1/jobs/{exports[0].job_id}/download"

    team_job = run_now(
        import_start,
        actor=actor,
        workspace=env.team,
        data=blobs[0],
        filename="capsule.zip",
        slug=f"copy-{name}",
    )
    assert team_job.state == "succeeded", team_job.error
    copy = SkillRevision.objects.get(revision_id=team_job.result["revision_id"])
    assert copy.canonical_hash == rev.canonical_hash
    original = {
        c.logical_path: (c.type, bytes(c.blob.data)) for c in rev.components.select_related("blob")
    }
    copied = {
        c.logical_path: (c.type, bytes(c.blob.data)) for c in copy.components.select_related("blob")
    }
    assert copied == original


def test_skill_json_folder_imports_as_a_script_skill(env: Env, run_now: Callable[..., Job]) -> None:
    job = run_now(
        import_start,
        actor=actor_for(env.owner),
        workspace=env.personal,
        data=fixture_zip("disk-usage"),
        filename="du.zip",
    )
    assert job.state == "succeeded", job.error
    rev = SkillRevision.objects.get(revision_id=job.result["revision_id"])
    assert rev.skill.slug == "disk-usage"
    assert rev.frontmatter["class"] in ("safe", "mutating", "dangerous")
    assert rev.components.filter(type="script").exists()


def _nothing_stored() -> bool:
    return not (Skill.objects.exists() or SkillRevision.objects.exists() or Blob.objects.exists())


@pytest.mark.parametrize(
    ("files", "code", "names"),
    [
        (
            {"SKILL.md": SKILL_MD, **{f"refs/f{i}.md": b"x" for i in range(51)}},
            "TOO_MANY_COMPONENTS",
            None,
        ),
        ({"SKILL.md": SKILL_MD, "big.bin": b"x" * 131073}, "COMPONENT_TOO_LARGE", "big.bin"),
        ({"README.md": b"no skill here"}, None, "SKILL.md"),
        ({"SKILL.md": b"---\nname: [unclosed\n---\nbody"}, "VALIDATION_ERROR", "SKILL.md"),
        (
            {"SKILL.md": b"---\nname: x\ndescription: y\n---\n\xff\xfe"},
            "VALIDATION_ERROR",
            "SKILL.md",
        ),
    ],
)
def test_bad_archives_fail_the_job_and_store_nothing(
    env: Env,
    run_now: Callable[..., Job],
    files: dict[str, bytes],
    code: str | None,
    names: str | None,
) -> None:
    job = run_now(
        import_start,
        actor=actor_for(env.owner),
        workspace=env.personal,
        data=zip_of(files),
        filename="x.zip",
    )
    assert job.state == "failed"
    if code:
        assert job.error["code"] == code
    if names:
        assert names in job.error["message"]
    assert _nothing_stored()


def test_a_pack_with_one_broken_skill_imports_nothing(
    env: Env, run_now: Callable[..., Job]
) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("good/SKILL.md", SKILL_MD)
        archive.writestr("other/SKILL.md", SKILL_MD.replace(b"Tiny skill", b"Other skill"))
        archive.writestr("broken/SKILL.md", b"---\nname: broken\n---\nno description")
    job = run_now(
        import_start,
        actor=actor_for(env.owner),
        workspace=env.personal,
        data=buffer.getvalue(),
        filename="pack.zip",
    )
    assert job.state == "failed"
    assert _nothing_stored()


def test_a_pack_imports_every_skill(env: Env, run_now: Callable[..., Job]) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("one/SKILL.md", SKILL_MD.replace(b"Tiny skill", b"One"))
        archive.writestr("two/SKILL.md", SKILL_MD.replace(b"Tiny skill", b"Two"))
    job = run_now(
        import_start,
        actor=actor_for(env.owner),
        workspace=env.personal,
        data=buffer.getvalue(),
        filename="p.zip",
    )
    assert job.state == "succeeded", job.error
    assert sorted(Skill.objects.values_list("slug", flat=True)) == ["one", "two"]
    assert len(job.result["skills"]) == 2


@pytest.mark.parametrize(
    ("data", "filename", "code"),
    [
        (b"\x00\x01", "x.exe", "UNSUPPORTED_FORMAT"),
        (zip_of({"../evil/SKILL.md": SKILL_MD}), "x.zip", "UNSAFE_ARCHIVE"),
    ],
)
def test_unknown_formats_and_unsafe_archives_are_refused_before_a_job_exists(
    env: Env, data: bytes, filename: str, code: str
) -> None:
    with pytest.raises(errors.XmemoError) as refused:
        import_start(
            actor=actor_for(env.owner), workspace=env.personal, data=data, filename=filename
        )
    assert refused.value.code == code
    assert not Job.objects.exists()
    assert _nothing_stored()


def test_workspace_and_history_exports(env: Env, run_now: Callable[..., Job]) -> None:
    save(env.owner, env.team, slug="a", intent="publish")
    save(env.owner, env.team, slug="a", instruction_body="v2")
    save(env.owner, env.team, slug="b")
    actor = actor_for(env.owner)
    ws_job = run_now(export_start, actor=actor, workspace=env.team)
    assert ws_job.state == "succeeded", ws_job.error
    names = zipfile.ZipFile(io.BytesIO(_output(ws_job))).namelist()
    # A workspace export is a backup: every revision of every skill.
    assert names[0] == "backup.json"
    assert {"skills/a/r0001/SKILL.md", "skills/a/r0002/SKILL.md", "skills/b/r0001/SKILL.md"} <= set(
        names
    )
    skill = Skill.objects.get(slug="a")
    history = run_now(export_start, actor=actor, skill=skill)
    names = zipfile.ZipFile(io.BytesIO(_output(history))).namelist()
    assert {"a/r0001/SKILL.md", "a/r0002/SKILL.md"} <= set(names)
    assert AuditEntry.objects.filter(action="jobs.export.finish").count() == 2


def test_members_cannot_export_a_whole_workspace(env: Env) -> None:
    from skills_app import errors

    with pytest.raises(errors.PermissionDenied):
        export_start(actor=actor_for(env.member), workspace=env.team)
    with pytest.raises(errors.NotFound):
        export_start(actor=actor_for(env.outsider), workspace=env.team)


def test_job_run_is_idempotent(env: Env, run_now: Callable[..., Job]) -> None:
    job = run_now(
        import_start,
        actor=actor_for(env.owner),
        workspace=env.personal,
        data=SKILL_MD,
        filename="SKILL.md",
    )
    assert job.state == "succeeded"
    job_run(job_id=job.job_id)  # a redelivered task
    assert SkillRevision.objects.count() == 1
    job.refresh_from_db()
    assert job.attempts == 1
