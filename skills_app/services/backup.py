"""Workspace backup and restore (docs/contract.md §9): the database side of
``skills_app.formats.backup`` (the format).

A restore goes only into an empty team workspace, by its owners and admins, in one
transaction; skills, revisions, reviews, conversations, approvals and labels come back with
new public ids, each revision inserted once in its final state (so the immutability trigger
and the one-published index hold at every statement). People map by username only to members
of the target team; every other name stays text, and nobody is made a member. The rules in
full: docs/backup.md."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from skills_app import errors
from skills_app.access import ADMIN_ROLES, Actor, require_role, require_scope
from skills_app.domain.bundle import ComponentData
from skills_app.domain.context_cost import revision_tokens
from skills_app.domain.lifecycle import OWNER
from skills_app.domain.shapes.jobs import RestoredSkill, RestoreResult
from skills_app.formats.backup import (
    Backup,
    BackupApproval,
    BackupComment,
    BackupLabel,
    BackupOutcome,
    BackupRevision,
    BackupScanOverride,
    BackupSkill,
)
from skills_app.formats.capsule import capsule_component
from skills_app.models import (
    ApiToken,
    RevisionApproval,
    RevisionComment,
    RevisionOutcome,
    Skill,
    SkillComponent,
    SkillLabel,
    SkillRevision,
    Workspace,
)
from skills_app.models.tenancy import acted_by
from skills_app.services.audit import audit_record
from skills_app.services.embeddings import embeddings_batched
from skills_app.services.scans import scan_override_restore, scan_wanted
from skills_app.services.skills import _refresh_pointers, _store_blobs
from skills_app.services.workspace_settings import _workspace_change

Progress = Callable[[int, int], None]


def _no_progress(done: int, total: int) -> None:
    return None


# --- backup -----------------------------------------------------------------------------------


def _username(user: Any, imported: str | None = None, token: ApiToken | None = None) -> str | None:
    """Who the record names: the account or the workspace token (``token:<name>``, which a
    restore keeps as text), else the name a restore kept as text."""
    return acted_by(user, token) or imported


def _scan_override(rev: SkillRevision) -> BackupScanOverride | None:
    """An owner's override of the revision's blocking scan (the scan itself is derived: a
    restore scans again)."""
    scan = getattr(rev, "scan", None)
    if scan is None or scan.override_at is None:
        return None
    return BackupScanOverride(
        by=scan.override_actor, reason=scan.override_reason, at=scan.override_at
    )


def _backup_revision(rev: SkillRevision, numbers: dict[int, int]) -> BackupRevision:
    return BackupRevision(
        revision_number=rev.revision_number,
        state=rev.state,
        name=rev.name,
        description=rev.description,
        frontmatter=rev.frontmatter,
        instruction_body=rev.instruction_body,
        canonical_hash=rev.canonical_hash,
        components=tuple(
            capsule_component(
                ComponentData(c.logical_path, c.type, bytes(c.blob.data), c.media_type),
                sha256=c.content_hash,
            )
            for c in rev.components.all()
        ),
        parent_revision_number=numbers.get(rev.parent_id) if rev.parent_id else None,
        author=_username(rev.author, rev.imported_author, rev.author_token),
        message=rev.message,
        source=rev.source,
        source_ref=rev.source_ref,
        created_at=rev.created_at,
        state_changed_at=rev.state_changed_at,
        reviewed_by=_username(rev.reviewed_by, rev.imported_reviewer, rev.reviewed_by_token),
        reviewed_at=rev.reviewed_at,
        review_comment=rev.review_comment,
        comments=tuple(
            BackupComment(
                author=_username(c.author, c.imported_author, c.author_token),
                body=c.body,
                line=c.line,
                action=c.action,
                created_at=c.created_at,
            )
            for c in rev.comments.all()
        ),
        approvals=tuple(
            BackupApproval(
                user=_username(a.user, a.imported_user, a.token), created_at=a.created_at
            )
            for a in rev.approvals.all()
        ),
        answers_revision_number=numbers.get(rev.answers_revision_id)
        if rev.answers_revision_id
        else None,
        scan_override=_scan_override(rev),
        outcomes=tuple(
            BackupOutcome(
                date=o.date.isoformat(),
                reporter=o.reporter,
                client_name=o.client_name,
                outcome=o.outcome,
                note=o.note,
                reported_at=o.reported_at,
            )
            for o in sorted(rev.outcomes.all(), key=lambda o: (o.reported_at, o.pk))
        ),
    )


def workspace_backup(*, workspace: Workspace, on_progress: Progress = _no_progress) -> Backup:
    """Every skill of the workspace (archived too) with every revision, as a ``Backup``."""
    skills = list(Skill.objects.filter(workspace=workspace).order_by("slug"))
    revisions = list(
        SkillRevision.objects.filter(workspace=workspace)
        .select_related("author", "reviewed_by", "author_token", "reviewed_by_token", "scan")
        .prefetch_related(
            "components__blob",
            "comments__author",
            "comments__author_token",
            "approvals__user",
            "approvals__token",
            "outcomes",
        )
        .order_by("skill_id", "revision_number")
    )
    numbers = {rev.pk: rev.revision_number for rev in revisions}
    labels: dict[int, list[BackupLabel]] = {}
    for label in SkillLabel.objects.filter(workspace=workspace).select_related("moved_by"):
        labels.setdefault(label.skill_id, []).append(
            BackupLabel(
                name=label.name,
                revision_number=numbers[label.revision_id],
                moved_by=_username(label.moved_by),
                moved_at=label.moved_at,
            )
        )
    by_skill: dict[int, list[BackupRevision]] = {}
    for done, rev in enumerate(revisions, start=1):
        by_skill.setdefault(rev.skill_id, []).append(_backup_revision(rev, numbers))
        on_progress(done, len(revisions))
    return Backup(
        workspace_slug=workspace.slug,
        workspace_name=workspace.name,
        permission_mode=None if workspace.is_personal else workspace.permission_mode,
        skills=tuple(
            BackupSkill(
                slug=skill.slug,
                status=skill.status,
                created_at=skill.created_at,
                revisions=tuple(by_skill.get(skill.pk, ())),
                labels=tuple(labels.get(skill.pk, ())),
            )
            for skill in skills
        ),
    )


# --- restore ----------------------------------------------------------------------------------


def restore_check(*, actor: Actor, workspace: Workspace) -> None:
    """Who may restore into which workspace: owners/admins, an enabled, empty team."""
    require_scope(actor, "skills:write")
    require_role(actor, workspace, ADMIN_ROLES)
    if not workspace.cloud_skills_enabled:
        raise errors.FeatureDisabled(details={"workspace": workspace.slug})
    if workspace.is_personal:
        raise errors.ValidationFailed(
            "A backup is restored into a team workspace: create an empty team and restore there.",
            details={"workspace": workspace.slug},
        )
    if Skill.objects.filter(workspace=workspace).exists():
        raise errors.Conflict(
            f"'{workspace.slug}' already holds skills; restore into an empty team workspace.",
            details={"workspace": workspace.slug},
        )


class _People:
    """The target team's members by username: who in the backup may be an account here."""

    def __init__(self, workspace: Workspace) -> None:
        user_model = get_user_model()
        self.members = {
            user.get_username(): user
            for user in user_model.objects.filter(memberships__workspace=workspace)
        }

    def account(self, name: str | None) -> Any:
        return self.members.get(name) if name is not None else None

    def imported(self, name: str | None) -> str | None:
        """The name kept as text when it is no member's (unknown names alike)."""
        return name if name is not None and name not in self.members else None


def _revision_row(
    rev: BackupRevision, *, skill: Skill, parent: SkillRevision | None, people: _People
) -> SkillRevision:
    return SkillRevision(
        skill=skill,
        workspace=skill.workspace,
        revision_number=rev.revision_number,
        state=rev.state,
        name=rev.name,
        description=rev.description,
        frontmatter=dict(rev.frontmatter),
        instruction_body=rev.instruction_body,
        canonical_hash=rev.canonical_hash,
        approx_tokens=revision_tokens(
            name=rev.name,
            description=rev.description,
            frontmatter=rev.frontmatter,
            instruction_body=rev.instruction_body,
            resources=[
                (c.logical_path, c.type, c.sha256, c.size, c.media_type) for c in rev.components
            ],
        ),
        parent=parent,
        author=people.account(rev.author),
        imported_author=people.imported(rev.author),
        message=rev.message,
        source=rev.source,
        source_ref=rev.source_ref,
        created_at=rev.created_at,
        state_changed_at=rev.state_changed_at,
        reviewed_by=people.account(rev.reviewed_by),
        imported_reviewer=people.imported(rev.reviewed_by),
        reviewed_at=rev.reviewed_at,
        review_comment=rev.review_comment,
    )


def _conversations_restore(
    rows: dict[tuple[int, int], SkillRevision],
    skills: list[tuple[Skill, BackupSkill]],
    workspace: Workspace,
    people: _People,
) -> None:
    """Each revision's comments, approvals, answered review and reported outcomes, after every
    revision exists."""
    revisions = [
        (rows[(skill.pk, rev.revision_number)], skill, rev)
        for skill, item in skills
        for rev in item.revisions
    ]
    RevisionComment.objects.bulk_create(
        [
            RevisionComment(
                revision=row,
                workspace=workspace,
                author=people.account(c.author),
                imported_author=people.imported(c.author),
                body=c.body,
                line=c.line,
                action=c.action,
                created_at=c.created_at,
            )
            for row, _, rev in revisions
            for c in rev.comments
        ],
        batch_size=1000,
    )
    RevisionApproval.objects.bulk_create(
        [
            RevisionApproval(
                revision=row,
                user=people.account(a.user),
                imported_user=people.imported(a.user),
                created_at=a.created_at,
            )
            for row, _, rev in revisions
            for a in rev.approvals
        ],
        batch_size=1000,
    )
    RevisionOutcome.objects.bulk_create(
        [
            RevisionOutcome(
                revision=row,
                date=date.fromisoformat(o.date),
                reporter=o.reporter,
                client_name=o.client_name,
                outcome=o.outcome,
                note=o.note,
                reported_at=o.reported_at,
            )
            for row, _, rev in revisions
            for o in rev.outcomes
        ],
        batch_size=1000,
        ignore_conflicts=True,  # one per reporter per day, as when they were counted
    )
    for row, skill, rev in revisions:
        if rev.answers_revision_number is not None:
            SkillRevision.objects.filter(pk=row.pk).update(
                answers_revision=rows[(skill.pk, rev.answers_revision_number)]
            )


def _overrides_restore(
    rows: dict[tuple[int, int], SkillRevision],
    skills: list[tuple[Skill, BackupSkill]],
    *,
    actor: Actor,
    workspace: Workspace,
    people: _People,
) -> list[str]:
    """The backup's scan overrides, each on its revision's scan (computed now): only where an
    owner restores, since only owners let a blocked revision through (docs/contract.md §21).
    Answers a note for each one left out."""
    owner = actor.role_in(workspace) == OWNER
    notes = []
    for skill, item in skills:
        for rev in item.revisions:
            if rev.scan_override is None:
                continue
            if not owner:
                notes.append(
                    f"{skill.slug} r{rev.revision_number}: its scan override was left out; only "
                    "an owner restores a scan override (an owner may override the scan again)."
                )
                continue
            scan_override_restore(
                revision=rows[(skill.pk, rev.revision_number)],
                user=people.account(rev.scan_override.by),
                by=rev.scan_override.by,
                reason=rev.scan_override.reason,
                at=rev.scan_override.at,
            )
    return notes


def workspace_restore(
    *, actor: Actor, workspace: Workspace, backup: Backup, on_progress: Progress = _no_progress
) -> RestoreResult:
    """Recreate every skill and revision of ``backup`` in the empty team ``workspace``."""
    total = backup.revision_count
    with transaction.atomic():
        locked = Workspace.objects.select_for_update().get(pk=workspace.pk)
        restore_check(actor=actor, workspace=locked)
        people = _People(locked)
        blobs = _store_blobs(
            [
                ComponentData(c.logical_path, c.type, c.content, c.media_type)
                for skill in backup.skills
                for rev in skill.revisions
                for c in rev.components
            ]
        )
        skills: list[tuple[Skill, BackupSkill]] = []
        for item in backup.skills:
            skill = Skill(
                workspace=locked,
                slug=item.slug,
                status=item.status,
                created_at=item.created_at,
                updated_at=timezone.now(),
            )
            # raw: keep the recorded created_at instead of auto_now_add's "now".
            skill.save_base(raw=True, force_insert=True)
            skills.append((skill, item))
        # Revision k of every skill in one statement, k = 1, 2, …: each one's parent (an
        # earlier number) exists by then. Each row goes in once with its final state.
        rows: dict[tuple[int, int], SkillRevision] = {}
        done = 0
        for number in range(1, max((len(i.revisions) for _, i in skills), default=0) + 1):
            level = [
                (skill, item.revisions[number - 1])
                for skill, item in skills
                if len(item.revisions) >= number
            ]
            created = SkillRevision.objects.bulk_create(
                [
                    _revision_row(
                        rev,
                        skill=skill,
                        parent=rows.get((skill.pk, rev.parent_revision_number or 0)),
                        people=people,
                    )
                    for skill, rev in level
                ]
            )
            for (skill, rev), row in zip(level, created, strict=True):
                rows[(skill.pk, rev.revision_number)] = row
            done += len(level)
            on_progress(done, total)
        SkillComponent.objects.bulk_create(
            [
                SkillComponent(
                    revision=rows[(skill.pk, rev.revision_number)],
                    logical_path=c.logical_path,
                    type=c.type,
                    blob=blobs[c.sha256],
                    content_hash=c.sha256,
                    size=c.size,
                    media_type=c.media_type,
                )
                for skill, item in skills
                for rev in item.revisions
                for c in rev.components
            ],
            batch_size=1000,
        )
        _conversations_restore(rows, skills, locked, people)
        notes = backup.notes + _overrides_restore(
            rows, skills, actor=actor, workspace=locked, people=people
        )
        if backup.permission_mode is not None:
            _workspace_change(
                actor=actor,
                workspace=locked,
                wanted={"permission_mode": backup.permission_mode},
                action="workspace.settings.change",
            )
        SkillLabel.objects.bulk_create(
            SkillLabel(
                skill=skill,
                workspace=locked,
                name=label.name,
                revision=rows[(skill.pk, label.revision_number)],
                moved_by=people.account(label.moved_by),
                moved_at=label.moved_at,
            )
            for skill, item in skills
            for label in item.labels
        )
        restored: list[RestoredSkill] = [
            {"skill_id": skill.skill_id, "slug": skill.slug} for skill, _ in skills
        ]
        # Scans are derived data too: every restored revision is scanned after commit.
        scan_wanted([row.revision_id for row in rows.values()])
        # Vectors are derived data, not in the backup: asked for once, after commit.
        with embeddings_batched():
            for skill_row in Skill.objects.filter(workspace=locked):
                _refresh_pointers(skill_row)
        audit_record(
            actor=actor,
            workspace=locked,
            action="workspace.restore",
            target_type="workspace",
            target_id=locked.slug,
            data={
                "from": backup.workspace_slug,
                "skills": len(restored),
                "revisions": total,
                "notes": notes,
            },
        )
    return {
        "skills": restored,
        "revision_count": total,
        "from_workspace": backup.workspace_slug,
        "notes": notes,
    }
