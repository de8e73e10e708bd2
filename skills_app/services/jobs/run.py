"""Running jobs: import, export, workspace restore and sandboxed execution.

The worker calls ``job_run``, which dispatches on the kind. Every job ends ``succeeded`` or
``failed`` with the error envelope's ``{code, message, details}``; a job whose worker died is
retried (``acks_late``) or, past its attempts or deadline, marked failed — never left "running"
forever. An import stores its skills in one transaction: all or nothing.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import psycopg
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from skills_app import errors
from skills_app.access import ADMIN_ROLES, Actor, require_role
from skills_app.domain.bundle import SkillBundle
from skills_app.domain.jobs import STALE_RULES, stale_verdict
from skills_app.domain.limits import slug_from_name
from skills_app.domain.secrets import secrets_masked, secrets_reach
from skills_app.formats import backup, capsule, url
from skills_app.formats.capsule import CapsuleRevision
from skills_app.formats.detect import upload_bundles_read
from skills_app.infra import db
from skills_app.infra.queue import tasks_run_eagerly
from skills_app.models import Job, Skill, SkillRevision, Workspace
from skills_app.sandbox import resolve_timeout, run_script
from skills_app.selectors.revisions import revision_bundle
from skills_app.selectors.secrets import script_environment
from skills_app.services.audit import audit_record
from skills_app.services.backup import workspace_backup, workspace_restore
from skills_app.services.embeddings import embeddings_batched
from skills_app.services.jobs.dispatch import job_dispatch
from skills_app.services.jobs.start import execute_gate
from skills_app.services.skills import skill_save

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
# Written with every end of a job, failed or not, by whichever path ends it: an upload is kept
# only while a worker may still read it (docs/contract.md §16b).
_INPUT_DROPPED: dict[str, Any] = {"input_data": None}


def job_progress(job: Job, *, done: int, total: int) -> None:
    Job.objects.filter(pk=job.pk).update(progress_done=done, progress_total=total)
    job.progress_done, job.progress_total = done, total


@contextmanager
def side_progress(job: Job) -> Iterator[Callable[[int, int], None]]:
    """A progress writer for work inside a long transaction (an import).

    Progress written on the job's own connection would stay invisible until that transaction
    commits, so pollers would read 0/0 to the end. On PostgreSQL each update is written and
    committed at once on a connection of its own (``infra.db.side_connection``, in this
    thread, closed at the end); the import's transaction never touches the job row, so the two
    never wait on each other. On SQLite a second writer would wait for the import's write
    lock, so progress stays on the job's own connection there.
    """
    if connection.vendor != "postgresql":
        yield lambda done, total: job_progress(job, done=done, total=total)
        return
    sql = (
        f"UPDATE {Job._meta.db_table} SET progress_done = %s, progress_total = %s"  # noqa: S608 - names only
        " WHERE id = %s"
    )
    with db.side_connection() as side:

        def write(done: int, total: int) -> None:
            try:
                side.execute(sql, [done, total, job.pk])
            except psycopg.Error:
                logger.warning("could not record progress of job %s", job.job_id)
            job.progress_done, job.progress_total = done, total

        yield write


def _storable(value: Any) -> Any:
    """``value`` with NUL characters replaced: PostgreSQL stores U+0000 in neither text nor
    JSON, and a refused write would leave the job "running" with its real error lost."""
    if isinstance(value, str):
        return value.replace("\0", "\ufffd")
    if isinstance(value, dict):
        return {_storable(k): _storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_storable(item) for item in value]
    return value


def job_log(job: Job, line: str) -> None:
    """Append one line to the job's log (kept bounded: the last 64 KiB)."""
    job.log = (job.log + _storable(line).rstrip("\n") + "\n")[-65536:]
    Job.objects.filter(pk=job.pk).update(log=job.log)


def _deleted_during_export(slugs: list[str]) -> errors.Conflict:
    return errors.Conflict(
        f"{', '.join(sorted(slugs))} was deleted for good while this export ran, so the export "
        "was not kept; export again.",
        details={"deleted": sorted(slugs)},
    )


def _exported_skills_lock(skill_ids: Collection[int]) -> set[int]:
    """Lock the rows of the skills an export wrote, until the transaction storing it ends, and
    answer which still exist. A delete locks its skill row first: it either committed before
    (the row is gone and the export is refused) or waits until the export is stored, then
    erases it with the job's other copies (services.skills._job_copies_erase)."""
    return set(
        Skill.objects.select_for_update()
        .filter(pk__in=skill_ids)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def _finish(
    job: Job,
    *,
    result: dict[str, Any] | None = None,
    error: errors.XmemoError | None = None,
    from_states: tuple[str, ...] = (Job.State.RUNNING,),
    exported_skills: Mapping[int, str] | None = None,
    **extra: Any,
) -> bool:
    """End the job, only if it is still in one of ``from_states`` and on the same attempt: a
    stale verdict or a later delivery of the same job may have moved it meanwhile, and
    neither may be overwritten. ``exported_skills`` (pk → slug) are the skills an export's
    file holds: stored only if every one still exists. Answers whether this call ended the
    job."""
    now = timezone.now()
    current = Job.objects.filter(pk=job.pk, state__in=from_states, attempts=job.attempts)
    try:
        with transaction.atomic():
            # A job that ran past its deadline already reads as failed (``domain.jobs``): that
            # verdict is written first, so the outcome below never contradicts what was read.
            jobs_fail_stale(pk=job.pk)
            if exported_skills and error is None:
                kept = _exported_skills_lock(exported_skills.keys())
                gone = [slug for pk, slug in exported_skills.items() if pk not in kept]
                if gone:
                    error, extra = _deleted_during_export(gone), {}
            fields: dict[str, Any] = {"finished_at": now, **_INPUT_DROPPED, **extra}
            if error is None:
                fields.update(state=Job.State.SUCCEEDED, result=_storable(result), error=None)
            else:
                fields.update(state=Job.State.FAILED, error=_storable(error.as_dict()))
            return bool(current.update(**fields))
    except DatabaseError:
        # Whatever the database refused, the job must still end, and end failed.
        logger.exception("could not store the outcome of job %s", job.job_id)
        failed = errors.JobFailed("The job's outcome could not be stored.")
        return bool(
            current.update(
                state=Job.State.FAILED,
                error=failed.as_dict(),
                finished_at=now,
                **_INPUT_DROPPED,
            )
        )


def jobs_fail_stale(*, now: datetime | None = None, pk: int | None = None) -> int:
    """Write the verdict ``domain.jobs`` reads: fail every job whose worker vanished or that no
    worker took (only the job ``pk`` when given). The conditions are in the update itself, so a
    job that finished or restarted meanwhile is left alone. Idempotent; run by the workers
    (before a job is picked up and when it ends, and periodically) and by ``fail_stale_jobs``.
    Answers how many jobs it failed."""
    now = now or timezone.now()
    rows = Job.objects.all() if pk is None else Job.objects.filter(pk=pk)
    failed = 0
    for rule in STALE_RULES:
        failed += rows.filter(state=rule.state, **{f"{rule.since}__lt": now - rule.after}).update(
            state=Job.State.FAILED,
            error=errors.JobFailed(rule.message).as_dict(),
            finished_at=now,
            **_INPUT_DROPPED,
        )
    return failed


def job_run(*, job_id: str, slots: int | None = None) -> None:
    """Run one job (called by the Celery task). Idempotent: finished jobs are left alone.
    ``slots`` is the worker's concurrency, which the execution caps stay below."""
    with transaction.atomic():
        job = Job.objects.select_for_update().filter(job_id=job_id).first()
        if job is None or job.state in (Job.State.SUCCEEDED, Job.State.FAILED):
            return
        if jobs_fail_stale(pk=job.pk):
            # It already reads as failed to anyone polling it: it stays failed.
            return
        if job.kind == Job.Kind.EXECUTE and _over_execution_caps(job, slots):
            # Wait without holding this worker slot: back on the queue, tried again shortly.
            transaction.on_commit(
                lambda: job_dispatch(
                    job_id, countdown=settings.XMEMO_EXECUTE_CAP_RETRY_SECONDS, again=True
                )
            )
            return
        if job.attempts >= MAX_ATTEMPTS:
            _finish(
                job,
                error=errors.JobFailed("The job failed repeatedly and was stopped."),
                from_states=(Job.State.QUEUED, Job.State.RUNNING),
            )
            return
        job.attempts += 1
        job.state = Job.State.RUNNING
        job.started_at = timezone.now()
        job.save(update_fields=["attempts", "state", "started_at"])
    handler = HANDLERS[job.kind]
    actor = Actor(user=job.created_by, token=job.token, via="job")
    try:
        result, extra = handler(job, actor)
    except errors.XmemoError as exc:
        _finish(job, error=exc)
    except Exception as exc:
        logger.exception("job %s crashed", job.job_id)
        _finish(job, error=errors.JobFailed(f"The job failed unexpectedly ({type(exc).__name__})."))
    else:
        _finish(job, result=result, **extra)


def execution_cap(setting: int, slots: int | None) -> int:
    """A cap as configured, held below the worker's ``slots`` (its concurrency) so that one
    person or workspace never holds them all, whatever the settings say (the README's worker
    runs ``--concurrency 2`` beside default caps of 2); a one-slot worker has nothing to share."""
    return setting if slots is None else max(1, min(setting, slots - 1))


def _over_execution_caps(job: Job, slots: int | None) -> bool:
    """Whether the job's workspace, or the person who started it (across all their
    workspaces), already runs their cap of executions: both caps sit below the worker's
    concurrency (``execution_cap``), so one tenant never holds every slot. The workspace row,
    then the user row, is locked (until the caller's transaction ends) so that concurrent starts
    count one by one — ``FOR NO KEY UPDATE``, which does not wait for (nor block) rows being
    inserted that refer to them (a new job, an audit entry): ``FOR UPDATE`` deadlocks there."""
    if job.state != Job.State.QUEUED or tasks_run_eagerly():
        # A redelivered running job is one of the running ones already; in-process (the
        # embedded default) jobs run one at a time anyway.
        return False
    running = Job.objects.filter(kind=Job.Kind.EXECUTE, state=Job.State.RUNNING)
    Workspace.objects.select_for_update(no_key=True).filter(pk=job.workspace_id).first()
    if running.filter(workspace_id=job.workspace_id).count() >= execution_cap(
        settings.XMEMO_EXECUTE_WORKSPACE_CONCURRENCY, slots
    ):
        return True
    if job.created_by_id is None:
        return False
    get_user_model().objects.select_for_update(no_key=True).filter(pk=job.created_by_id).first()
    return running.filter(created_by_id=job.created_by_id).count() >= execution_cap(
        settings.XMEMO_EXECUTE_USER_CONCURRENCY, slots
    )


# --- handlers -------------------------------------------------------------------------------

Handler = Callable[[Job, Actor], tuple[dict[str, Any], dict[str, Any]]]


def _read_bundles(job: Job) -> list[SkillBundle]:
    """The skills of an import: fetched from its URL, or read from the stored upload."""
    params = job.params
    if params.get("url"):
        return url.url_bundles_read(params["url"], settings=url.UrlImportSettings.from_django())
    data = bytes(Job.objects.filter(pk=job.pk).values_list("input_data", flat=True).get() or b"")
    return upload_bundles_read(data, params.get("filename") or "")


def _run_import(job: Job, actor: Actor) -> tuple[dict[str, Any], dict[str, Any]]:
    bundles = _read_bundles(job)
    slug_override = job.params.get("slug")
    if slug_override and len(bundles) != 1:
        raise errors.ValidationFailed(
            "A slug can only be given when importing one skill.", details={"field": "slug"}
        )
    saved: list[dict[str, Any]] = []
    # One transaction, and one request for the skills' vectors once it commits.
    with side_progress(job) as progress, transaction.atomic(), embeddings_batched():
        for index, bundle in enumerate(bundles, start=1):
            slug = slug_override or bundle.slug or slug_from_name(bundle.name)
            progress(index - 1, len(bundles))
            outcome = skill_save(
                actor=actor,
                workspace=job.workspace,
                slug=slug,
                bundle=bundle,
                intent=job.params.get("intent", "draft"),
                message=f"Imported from {bundle.source_ref or bundle.source}",
                acknowledge_secrets=bool(job.params.get("acknowledge_secrets")),
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
        still_ours = Job.objects.select_for_update().filter(
            pk=job.pk, state=Job.State.RUNNING, attempts=job.attempts
        )
        ours = still_ours.values_list("state", "started_at", "created_at").first()
        if ours is None or stale_verdict(
            state=ours[0], started_at=ours[1], created_at=ours[2], now=timezone.now()
        ):
            # Failed meanwhile (or reading as failed: past its deadline), or taken over by a
            # later delivery: a job that does not end succeeded stores nothing.
            raise errors.JobFailed("The job was stopped before its skills were stored.")
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
    return capsule.capsule_revision(
        revision_bundle(revision),
        skill_id=revision.skill.skill_id,
        slug=revision.skill.slug,
        workspace=revision.workspace.slug,
        revision_id=revision.revision_id,
        revision_number=revision.revision_number,
        state=revision.state,
        canonical_hash=revision.canonical_hash,
    )


def _capsule_revisions(job: Job, revisions: list[SkillRevision]) -> list[CapsuleRevision]:
    """Read the revisions to export, counting each as done."""
    job_progress(job, done=0, total=len(revisions))
    read = []
    for done, revision in enumerate(revisions, start=1):
        read.append(_capsule_revision(revision))
        job_progress(job, done=done, total=len(revisions))
    return read


def _run_export(job: Job, actor: Actor) -> tuple[dict[str, Any], dict[str, Any]]:
    params = job.params
    base = SkillRevision.objects.select_related("skill", "workspace").filter(
        workspace=job.workspace
    )
    exported: dict[int, str] = {}  # the skills the file holds, checked when it is stored
    if "revision_id" in params:
        revision = base.get(revision_id=params["revision_id"])
        data = capsule.capsule_write(_capsule_revisions(job, [revision])[0])
        name = f"{revision.skill.slug}-r{revision.revision_number}.zip"
        exported[revision.skill_id] = revision.skill.slug
    elif "skill_id" in params:
        revisions = list(
            base.filter(skill__skill_id=params["skill_id"]).order_by("revision_number")
        )
        data = capsule.capsule_history_write(_capsule_revisions(job, revisions))
        name = f"{revisions[0].skill.slug}-history.zip" if revisions else "skill.zip"
        exported.update((rev.skill_id, rev.skill.slug) for rev in revisions[:1])
    else:
        require_role(actor, job.workspace, ADMIN_ROLES)
        read = workspace_backup(
            workspace=job.workspace,
            on_progress=lambda done, total: job_progress(job, done=done, total=total),
        )
        data = backup.backup_write(read)
        name = f"{job.workspace.slug}-backup.zip"
        exported = _backup_skills(job.workspace, read)
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
    return result, {"output_data": data, "output_name": name, "exported_skills": exported}


def _backup_skills(workspace: Workspace, read: backup.Backup) -> dict[int, str]:
    """The rows of the skills a backup holds (pk → slug), by slug and creation time: a skill
    deleted since it was read (its slug perhaps reused) has no row, which is refused here."""
    wanted = {(skill.slug, skill.created_at) for skill in read.skills}
    rows = {
        (slug, created): pk
        for pk, slug, created in Skill.objects.filter(
            workspace=workspace, slug__in=[slug for slug, _ in wanted]
        ).values_list("pk", "slug", "created_at")
    }
    gone = [slug for slug, created in wanted if (slug, created) not in rows]
    if gone:
        raise _deleted_during_export(gone)
    return {pk: slug for (slug, created), pk in rows.items() if (slug, created) in wanted}


def _run_execute(job: Job, actor: Actor) -> tuple[dict[str, Any], dict[str, Any]]:
    params = job.params
    revision = SkillRevision.objects.select_related("workspace", "skill").get(
        revision_id=params["revision_id"]
    )
    try:
        execute_gate(actor=actor, revision=revision, confirm=bool(params.get("confirm")))
    except (errors.PermissionDenied, errors.NotFound, errors.ConfirmationRequired) as exc:
        # Rights may have changed since the job was queued (a demotion, the dangerous-scripts
        # switch turned off, the member gone): as things stand now, the script does not run.
        raise errors.PermissionDenied(
            f"The script was not run: {exc.message} (checked again when the job started)",
            details={**exc.details, "checked": "start"},
        ) from exc
    files = {c.logical_path: bytes(c.blob.data) for c in revision.components.select_related("blob")}
    frontmatter = revision.frontmatter or {}
    env_allow = [str(name) for name in frontmatter.get("env_allow") or []]
    withheld: dict[str, Any] = {}
    if secrets_reach(workspace_kind=revision.workspace.kind, revision_state=revision.state):
        secrets = script_environment(workspace=revision.workspace, names=env_allow)
    else:
        secrets = {}
        if env_allow:
            # Named, whether or not each is a secret: a run says nothing of which secrets exist.
            withheld = {"secrets_withheld": env_allow}
            job_log(
                job,
                f"Secrets withheld: {', '.join(env_allow)} (env_allow) — this revision is "
                f"{revision.state}; in a team a secret reaches only the published revision, "
                "the one that passed review.",
            )

    def masked(value: Any) -> Any:
        return secrets_masked(value, secrets.values())

    outcome = run_script(
        files=files,
        entry=params["resource"],
        args=params.get("args") or {},
        env_allow=env_allow,
        env_source=secrets,
        timeout_seconds=resolve_timeout(
            frontmatter.get("timeout_seconds"), settings.XMEMO_SANDBOX_MAX_TIMEOUT
        ),
        on_log=lambda line: job_log(job, masked(line)),
        bwrap_path=settings.XMEMO_BWRAP_PATH,
    )
    if outcome.ok and _storable(outcome.result) != outcome.result:
        # Valid JSON, but PostgreSQL stores U+0000 in no text or JSON value: say so rather
        # than fail to store the job's outcome.
        raise errors.ScriptFailed(
            "The script's result holds a NUL character (\\u0000), which cannot be stored; "
            "encode binary data (e.g. base64).",
            details={"reason": "PROTOCOL_ERROR", "exit_code": 0},
        )
    if not outcome.ok:
        raise errors.ScriptFailed(
            masked(outcome.error_message or "The script failed."),
            details={
                "reason": outcome.error_code,
                "exit_code": outcome.exit_code,
                "stderr_tail": masked(outcome.stderr_tail),
                **withheld,
            },
        )
    output = masked(outcome.result)
    return {"output": output, "duration_seconds": round(outcome.duration, 3), **withheld}, {}


def _run_restore(job: Job, actor: Actor) -> tuple[dict[str, Any], dict[str, Any]]:
    data = bytes(Job.objects.filter(pk=job.pk).values_list("input_data", flat=True).get() or b"")
    restored = backup.backup_read(data)
    with side_progress(job) as progress:
        result = workspace_restore(
            actor=actor, workspace=job.workspace, backup=restored, on_progress=progress
        )
    total = restored.revision_count
    job_progress(job, done=total, total=total)
    return dict(result), {}


HANDLERS: dict[str, Handler] = {
    Job.Kind.IMPORT: _run_import,
    Job.Kind.EXPORT: _run_export,
    Job.Kind.EXECUTE: _run_execute,
    Job.Kind.RESTORE: _run_restore,
}
