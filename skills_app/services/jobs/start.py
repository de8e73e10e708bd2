"""Starting jobs: each ``*_start`` checks permissions and input, creates the Job row and hands
it to the broker after commit (``dispatch.job_dispatch``); ``run.job_run`` does the work."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from skills_app import errors
from skills_app.access import ADMIN_ROLES, Actor, require_role, require_scope
from skills_app.domain.arguments import arguments_check
from skills_app.domain.limits import validate_slug
from skills_app.domain.permission_modes import check_permission_mode, stricter_mode
from skills_app.formats.backup import backup_format_check
from skills_app.formats.detect import upload_format_check
from skills_app.models import ApiToken, Job, Skill, SkillRevision, Workspace
from skills_app.sandbox import DEFAULT_SCRIPT_CLASS, check_execution_allowed
from skills_app.selectors.reviews import revision_sign_offs
from skills_app.services.audit import audit_record
from skills_app.services.backup import restore_check
from skills_app.services.jobs.dispatch import job_dispatch
from skills_app.services.scans import scan_gate

MAX_UPLOAD_BYTES = 16 * 1024 * 1024
MAX_BACKUP_BYTES = 512 * 1024 * 1024  # a whole workspace, not one skill


def _enqueue(job: Job) -> None:
    transaction.on_commit(lambda: job_dispatch(job.job_id))


def _uploads_admit(actor: Actor) -> None:
    """Bound the uploads one user keeps stored: jobs with input that have not ended. The user's
    row is locked (until the caller's transaction ends) so concurrent starts count one by one."""
    if actor.workspace_token is not None:  # a workspace token's uploads are its own
        ApiToken.objects.select_for_update().filter(pk=actor.workspace_token.pk).first()
        mine = Job.objects.filter(token=actor.workspace_token)
    elif actor.user is not None:
        get_user_model().objects.select_for_update().filter(pk=actor.user.pk).first()
        mine = Job.objects.filter(created_by=actor.user)
    else:
        return  # the operator's commands
    held = mine.filter(
        state__in=(Job.State.QUEUED, Job.State.RUNNING), input_data__isnull=False
    ).count()
    limit = settings.XMEMO_MAX_PENDING_UPLOADS
    if held >= limit:
        raise errors.UploadsPending(
            f"You have {held} uploads waiting to be imported or restored (at most {limit}); "
            "try again when one has finished.",
            details={"limit": limit, "pending": held},
        )


def _new_job(
    *, actor: Actor, workspace: Workspace, kind: str, params: dict[str, Any], **extra: Any
) -> Job:
    with transaction.atomic():
        if extra.get("input_data") is not None:
            _uploads_admit(actor)
        job = Job.objects.create(
            workspace=workspace,
            kind=kind,
            params=params,
            created_by=actor.person,
            token=actor.token,
            **extra,
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


def import_start(
    *,
    actor: Actor,
    workspace: Workspace,
    data: bytes | None = None,
    filename: str = "",
    url: str | None = None,
    slug: str | None = None,
    intent: str = "draft",
    acknowledge_secrets: bool = False,
) -> Job:
    """Queue an import of an uploaded file (SKILL.md, ZIP, skill.json) or of a URL; a live
    secret in it fails the job with SECRET_DETECTED unless ``acknowledge_secrets``."""
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
    if data is not None:
        upload_format_check(data, filename)
    params: dict[str, Any] = {"intent": intent, "slug": slug or None}
    if acknowledge_secrets:
        params["acknowledge_secrets"] = True
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
    backup_format_check(data)
    return _new_job(
        actor=actor,
        workspace=workspace,
        kind=Job.Kind.RESTORE,
        params={"filename": filename},
        input_data=data,
        input_name=filename,
    )


def execute_gate(*, actor: Actor, revision: SkillRevision, confirm: bool = False) -> None:
    """Whether ``actor`` may run a script of ``revision`` (its class, the actor's role and
    scope, the workspace's ``allow_dangerous_scripts``, the permission mode of the team and of
    the token with the request's ``confirm`` and the revision's sign-offs, the scan's gate):
    checked when the job is queued and again when it starts (``run``), as things stand then."""
    if actor.token is not None and actor.token.revoked_at is not None:
        raise errors.PermissionDenied("The token this script was started with has been revoked.")
    workspace = revision.workspace
    script_class = str((revision.frontmatter or {}).get("class", DEFAULT_SCRIPT_CLASS))
    check_execution_allowed(
        script_class=script_class,
        role=require_role(actor, workspace),
        has_execute_scope=actor.has_scope("skills:execute"),
        workspace_allows_dangerous=workspace.allow_dangerous_scripts,
    )
    token_mode = actor.token.permission_mode if actor.token is not None else ""
    team_mode = workspace.permission_mode if workspace.kind == Workspace.Kind.TEAM else ""
    if team_mode or token_mode:
        check_permission_mode(
            mode=stricter_mode(team_mode, token_mode),
            script_class=script_class,
            confirm=confirm,
            sign_offs=len(revision_sign_offs(revision)) if script_class == "dangerous" else 0,
        )
    scan_gate(revision=revision, what="run")


def execute_start(
    *,
    actor: Actor,
    revision: SkillRevision,
    resource: str,
    args: dict[str, Any],
    confirm: bool = False,
) -> Job:
    """Queue one script component of a pinned revision for the sandbox (docs/contract.md §13)."""
    require_scope(actor, "skills:execute")
    require_role(actor, revision.workspace)
    component = revision.components.filter(logical_path=resource).first()
    if component is None:
        raise errors.NotFound(
            f"No component '{resource}' in this revision.", details={"resource": resource}
        )
    if component.type != "script":
        raise errors.ValidationFailed(
            f"'{resource}' is a {component.type}, not a script.", details={"resource": resource}
        )
    execute_gate(actor=actor, revision=revision, confirm=confirm)
    if not isinstance(args, dict):
        raise errors.ValidationFailed("args must be a JSON object.", details={"field": "args"})
    schema = (revision.frontmatter or {}).get("schema")
    if isinstance(schema, dict):
        # Checked here, before the job exists, so bad args never reach a queue or a sandbox.
        arguments_check(
            schema,
            args,
            against="the script's schema",
            prefix="args",
            schema_field="frontmatter.schema",
        )
    return _new_job(
        actor=actor,
        workspace=revision.workspace,
        kind=Job.Kind.EXECUTE,
        params={
            "revision_id": revision.revision_id,
            "resource": resource,
            "args": args,
            **({"confirm": True} if confirm else {}),
        },
    )
