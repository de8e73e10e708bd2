"""Background jobs: import, export, workspace restore and sandboxed execution.

A ``*_start`` service checks permissions, creates the Job row and enqueues ``tasks.run_job``
after commit; the worker calls ``job_run``, which dispatches on the kind. Every job ends
``succeeded`` or ``failed`` with the error envelope's ``{code, message, details}``; a job whose
worker died is retried (``acks_late``) or, past its attempts or deadline, marked failed — never
left "running" forever. An import stores its skills in one transaction: all or nothing.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .. import backup, capsule, errors
from ..access import ADMIN_ROLES, Actor, require_role, require_scope
from ..capsule import CapsuleComponent, CapsuleRevision
from ..domain.bundle import SkillBundle
from ..domain.limits import slug_from_name, validate_slug
from ..models import Job, Skill, SkillRevision, Workspace
from ..sandbox import DEFAULT_SCRIPT_CLASS, check_execution_allowed, resolve_timeout, run_script
from ..sources import archive, skilljson, skillmd, url
from ..tasks import run_job
from .audit import audit_record
from .backup import restore_check, workspace_backup, workspace_restore
from .skills import skill_save

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
STALE_AFTER = timedelta(minutes=15)
QUEUED_STALE_AFTER = timedelta(hours=1)
MAX_UPLOAD_BYTES = 16 * 1024 * 1024
MAX_BACKUP_BYTES = 512 * 1024 * 1024  # a whole workspace, not one skill


def _enqueue(job: Job) -> None:
    transaction.on_commit(lambda: run_job.delay(job.job_id))


def _new_job(
    *, actor: Actor, workspace: Workspace, kind: str, params: dict[str, Any], **extra: Any
) -> Job:
    with transaction.atomic():
        job = Job.objects.create(
            workspace=workspace, kind=kind, params=params, created_by=actor.user, **extra
        )
        audit_record(
            actor=actor,
            workspace=workspace,
            action=f"jobs.{kind}.start",
            target_type="job",
            target_id=job.job_id,
            data={k: v for k, v in params.items() if k != "args"},
        )
        _enqueue(job)
    return job


# --- starting -------------------------------------------------------------------------------


def import_start(
    *,
    actor: Actor,
    workspace: Workspace,
    data: bytes | None = None,
    filename: str = "",
    url: str | None = None,
    slug: str | None = None,
    intent: str = "draft",
) -> Job:
    """Queue an import of an uploaded file (SKILL.md, ZIP, skill.json) or of a URL."""
    require_scope(actor, "skills:write")
    require_role(actor, workspace)
    if (data is None) == (url is None):
        raise errors.ValidationFailed("Give either a file or a url.", details={"field": "file"})
    if intent not in ("draft", "publish"):
        raise errors.ValidationFailed(
            "intent must be 'draft' or 'publish'.", details={"field": "intent"}
        )
    if slug:
        validate_slug(slug)
    if data is not None and len(data) > MAX_UPLOAD_BYTES:
        raise errors.UnsafeArchive(
            f"The upload is larger than {MAX_UPLOAD_BYTES} bytes.",
            details={"limit": MAX_UPLOAD_BYTES},
        )
    params: dict[str, Any] = {"intent": intent, "slug": slug or None}
    if url is not None:
        params["url"] = url
    else:
        params["filename"] = filename
    return _new_job(
        actor=actor,
        workspace=workspace,
        kind=Job.Kind.IMPORT,
        params=params,
        input_data=data,
        input_name=filename,
    )


def export_start(
    *,
    actor: Actor,
    revision: SkillRevision | None = None,
    skill: Skill | None = None,
    workspace: Workspace | None = None,
) -> Job:
    """Queue a Source Capsule export of one revision, one skill's revisions, or a workspace."""
    require_scope(actor, "skills:read")
    targets = [t for t in (revision, skill, workspace) if t is not None]
    if len(targets) != 1:
        raise errors.ValidationFailed(
            "Give exactly one of revision_id, skill_id or workspace.", details={"field": "target"}
        )
    if revision is not None:
        ws, params = revision.workspace, {"revision_id": revision.revision_id}
    elif skill is not None:
        ws, params = skill.workspace, {"skill_id": skill.skill_id}
    else:
        assert workspace is not None
        require_role(actor, workspace, ADMIN_ROLES)
        ws, params = workspace, {"workspace": workspace.slug}
    require_role(actor, ws)
    return _new_job(actor=actor, workspace=ws, kind=Job.Kind.EXPORT, params=params)


def restore_start(*, actor: Actor, workspace: Workspace, data: bytes, filename: str = "") -> Job:
    """Queue the restore of a workspace backup into ``workspace`` (an empty team)."""
    restore_check(actor=actor, workspace=workspace)
    if len(data) > MAX_BACKUP_BYTES:
        raise errors.UnsafeArchive(
            f"The backup is larger than {MAX_BACKUP_BYTES} bytes.",
            details={"limit": MAX_BACKUP_BYTES},
        )
    return _new_job(
        actor=actor,
        workspace=workspace,
        kind=Job.Kind.RESTORE,
        params={"filename": filename},
        input_data=data,
        input_name=filename,
    )


def execute_start(
    *, actor: Actor, revision: SkillRevision, resource: str, args: dict[str, Any]
) -> Job:
    """Queue one script component of a pinned revision for the sandbox (SPEC §13)."""
    require_scope(actor, "skills:execute")
    role = require_role(actor, revision.workspace)
    component = revision.components.filter(logical_path=resource).first()
    if component is None:
        raise errors.NotFound(
            f"No component '{resource}' in this revision.", details={"resource": resource}
        )
    if component.type != "script":
        raise errors.ValidationFailed(
            f"'{resource}' is a {component.type}, not a script.", details={"resource": resource}
        )
    check_execution_allowed(
        script_class=str((revision.frontmatter or {}).get("class", DEFAULT_SCRIPT_CLASS)),
        role=role,
        has_execute_scope=True,
        workspace_allows_dangerous=revision.workspace.allow_dangerous_scripts,
    )
    if not isinstance(args, dict):
        raise errors.ValidationFailed("args must be a JSON object.", details={"field": "args"})
    return _new_job(
        actor=actor,
        workspace=revision.workspace,
        kind=Job.Kind.EXECUTE,
        params={"revision_id": revision.revision_id, "resource": resource, "args": args},
    )


# --- running --------------------------------------------------------------------------------


def job_progress(job: Job, *, done: int, total: int) -> None:
    Job.objects.filter(pk=job.pk).update(progress_done=done, progress_total=total)
    job.progress_done, job.progress_total = done, total


def job_log(job: Job, line: str) -> None:
    """Append one line to the job's log (kept bounded: the last 64 KiB)."""
    job.log = (job.log + line.rstrip("\n") + "\n")[-65536:]
    Job.objects.filter(pk=job.pk).update(log=job.log)


def _finish(
    job: Job,
    *,
    result: dict[str, Any] | None = None,
    error: errors.XmemoError | None = None,
    **extra: Any,
) -> None:
    fields: dict[str, Any] = {"finished_at": timezone.now(), **extra}
    if error is None:
        fields.update(state=Job.State.SUCCEEDED, result=result, error=None)
    else:
        fields.update(state=Job.State.FAILED, error=error.as_dict())
    Job.objects.filter(pk=job.pk).update(**fields)


def job_fail_stale(job: Job) -> Job:
    """Mark a job whose worker vanished (or that was never picked up) as failed, so nobody
    polls it forever."""
    now = timezone.now()
    lost = job.state == Job.State.RUNNING and job.started_at and now - job.started_at > STALE_AFTER
    never_taken = job.state == Job.State.QUEUED and now - job.created_at > QUEUED_STALE_AFTER
    if lost or never_taken:
        message = (
            "The worker running this job stopped; start it again."
            if lost
            else "No worker picked this job up; check that the workers are running."
        )
        _finish(job, error=errors.JobFailed(message))
        job.refresh_from_db()
    return job


def job_run(*, job_id: str) -> None:
    """Run one job (called by the Celery task). Idempotent: finished jobs are left alone."""
    with transaction.atomic():
        job = Job.objects.select_for_update().filter(job_id=job_id).first()
        if job is None or job.state in (Job.State.SUCCEEDED, Job.State.FAILED):
            return
        job.attempts += 1
        if job.attempts > MAX_ATTEMPTS:
            Job.objects.filter(pk=job.pk).update(attempts=job.attempts)
            _finish(job, error=errors.JobFailed("The job failed repeatedly and was stopped."))
            return
        job.state = Job.State.RUNNING
        job.started_at = timezone.now()
        job.save(update_fields=["attempts", "state", "started_at"])
    handler = HANDLERS[job.kind]
    actor = Actor(user=job.created_by, via="job")
    try:
        result, extra = handler(job, actor)
    except errors.XmemoError as exc:
        _finish(job, error=exc)
    except Exception as exc:
        logger.exception("job %s crashed", job.job_id)
        _finish(job, error=errors.JobFailed(f"The job failed unexpectedly ({type(exc).__name__})."))
    else:
        _finish(job, result=result, **extra)


# --- handlers -------------------------------------------------------------------------------

Handler = Callable[[Job, Actor], tuple[dict[str, Any], dict[str, Any]]]


def _read_bundles(job: Job) -> list[SkillBundle]:
    params = job.params
    if params.get("url"):
        return url.url_bundles_read(params["url"], settings=url.UrlImportSettings.from_django())
    data = bytes(Job.objects.filter(pk=job.pk).values_list("input_data", flat=True).get() or b"")
    name = (params.get("filename") or "").rsplit("/", 1)[-1]
    if data[:4] == b"PK\x03\x04" or name.lower().endswith(".zip"):
        return archive.zip_bundles_read(data, source="import-zip", source_ref=name)
    if name.lower().endswith(".json"):
        return [skilljson.skill_json_bundle_read(data, filename=name)]
    if name.lower().endswith(".md") or data.lstrip()[:3] == b"---":
        return [skillmd.skill_md_bundle_read(data, filename=name or "SKILL.md")]
    raise errors.UnsupportedFormat(
        f"'{name or 'the upload'}' is not a SKILL.md, a ZIP or a skill.json.",
        details={"filename": name},
    )


def _run_import(job: Job, actor: Actor) -> tuple[dict[str, Any], dict[str, Any]]:
    bundles = _read_bundles(job)
    slug_override = job.params.get("slug")
    if slug_override and len(bundles) != 1:
        raise errors.ValidationFailed(
            "A slug can only be given when importing one skill.", details={"field": "slug"}
        )
    saved: list[dict[str, Any]] = []
    with transaction.atomic():
        for index, bundle in enumerate(bundles, start=1):
            slug = slug_override or bundle.slug or slug_from_name(bundle.name)
            job_progress(job, done=index - 1, total=len(bundles))
            outcome = skill_save(
                actor=actor,
                workspace=job.workspace,
                slug=slug,
                bundle=bundle,
                intent=job.params.get("intent", "draft"),
                message=f"Imported from {bundle.source_ref or bundle.source}",
            )
            rev = outcome.revision
            saved.append(
                {
                    "skill_id": rev.skill.skill_id,
                    "slug": slug,
                    "revision_id": rev.revision_id,
                    "revision_number": rev.revision_number,
                    "state": rev.state,
                    "canonical_hash": rev.canonical_hash,
                    "created": outcome.created,
                }
            )
        audit_record(
            actor=actor,
            workspace=job.workspace,
            action="jobs.import.finish",
            target_type="job",
            target_id=job.job_id,
            data={"skills": [s["slug"] for s in saved]},
        )
    job_progress(job, done=len(bundles), total=len(bundles))
    first = saved[0]
    result = {
        "skill_id": first["skill_id"],
        "revision_id": first["revision_id"],
        "canonical_hash": first["canonical_hash"],
        "skills": saved,
    }
    return result, {}


def _capsule_revision(revision: SkillRevision) -> CapsuleRevision:
    components = [
        CapsuleComponent(
            logical_path=c.logical_path,
            type=c.type,
            media_type=c.media_type,
            sha256=c.content_hash,
            size=c.size,
            content=bytes(c.blob.data),
        )
        for c in revision.components.select_related("blob").order_by("logical_path")
    ]
    return CapsuleRevision(
        skill_id=revision.skill.skill_id,
        slug=revision.skill.slug,
        workspace=revision.workspace.slug,
        revision_id=revision.revision_id,
        revision_number=revision.revision_number,
        state=revision.state,
        name=revision.name,
        description=revision.description,
        frontmatter=revision.frontmatter,
        instruction_body=revision.instruction_body,
        canonical_hash=revision.canonical_hash,
        components=components,
    )


def _run_export(job: Job, actor: Actor) -> tuple[dict[str, Any], dict[str, Any]]:
    params = job.params
    base = SkillRevision.objects.select_related("skill", "workspace").filter(
        workspace=job.workspace
    )
    if "revision_id" in params:
        revision = base.get(revision_id=params["revision_id"])
        data = capsule.capsule_write(_capsule_revision(revision))
        name = f"{revision.skill.slug}-r{revision.revision_number}.zip"
    elif "skill_id" in params:
        revisions = list(
            base.filter(skill__skill_id=params["skill_id"]).order_by("revision_number")
        )
        job_progress(job, done=0, total=len(revisions))
        data = capsule.capsule_history_write([_capsule_revision(r) for r in revisions])
        name = f"{revisions[0].skill.slug}-history.zip" if revisions else "skill.zip"
    else:
        require_role(actor, job.workspace, ADMIN_ROLES)
        data = backup.backup_write(
            workspace_backup(
                workspace=job.workspace,
                on_progress=lambda done, total: job_progress(job, done=done, total=total),
            )
        )
        name = f"{job.workspace.slug}-backup.zip"
    digest = hashlib.sha256(data).hexdigest()
    audit_record(
        actor=actor,
        workspace=job.workspace,
        action="jobs.export.finish",
        target_type="job",
        target_id=job.job_id,
        data={**params, "sha256": digest, "size": len(data)},
    )
    result = {
        "download_url": f"/v1/jobs/{job.job_id}/download",
        "filename": name,
        "size": len(data),
        "sha256": digest,
    }
    return result, {"output_data": data, "output_name": name}


def _run_execute(job: Job, actor: Actor) -> tuple[dict[str, Any], dict[str, Any]]:
    params = job.params
    revision = SkillRevision.objects.select_related("workspace", "skill").get(
        revision_id=params["revision_id"]
    )
    require_role(actor, revision.workspace)
    files = {c.logical_path: bytes(c.blob.data) for c in revision.components.select_related("blob")}
    frontmatter = revision.frontmatter or {}
    env_allow = [str(name) for name in frontmatter.get("env_allow") or []]
    outcome = run_script(
        files=files,
        entry=params["resource"],
        args=params.get("args") or {},
        env_allow=env_allow,
        timeout_seconds=resolve_timeout(
            frontmatter.get("timeout_seconds"), settings.XMEMO_SANDBOX_MAX_TIMEOUT
        ),
        on_log=lambda line: job_log(job, line),
        bwrap_path=settings.XMEMO_BWRAP_PATH,
    )
    if not outcome.ok:
        raise errors.ScriptFailed(
            outcome.error_message or "The script failed.",
            details={
                "reason": outcome.error_code,
                "exit_code": outcome.exit_code,
                "stderr_tail": outcome.stderr_tail,
            },
        )
    return {"output": outcome.result, "duration_seconds": round(outcome.duration, 3)}, {}


def _run_restore(job: Job, actor: Actor) -> tuple[dict[str, Any], dict[str, Any]]:
    data = bytes(Job.objects.filter(pk=job.pk).values_list("input_data", flat=True).get() or b"")
    result = workspace_restore(
        actor=actor,
        workspace=job.workspace,
        backup=backup.backup_read(data),
        on_progress=lambda done, total: job_progress(job, done=done, total=total),
    )
    return result, {}


HANDLERS: dict[str, Handler] = {
    Job.Kind.IMPORT: _run_import,
    Job.Kind.EXPORT: _run_export,
    Job.Kind.EXECUTE: _run_execute,
    Job.Kind.RESTORE: _run_restore,
}
