"""The scan of every revision, the write side (docs/contract.md §21, docs/scanning.md).

Whatever stores a revision calls ``scan_wanted`` in its transaction; after commit the revision
goes to a worker on ``XMEMO_SCAN_QUEUE`` (task ``scan_revisions``, ``infra.queue.hand_over``), or
is scanned in process where tasks run in-process. The periodic sweep (``scans_sweep``, a beat
entry) catches up a bounded round of revisions unscanned or scanned by another
``SCANNER_VERSION``. A scan is computed outside any transaction and stored by an
upsert that keeps an owner's override."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from skills_app import errors
from skills_app.access import Actor, require_role, require_scope
from skills_app.domain.lifecycle import OWNER
from skills_app.domain.scan import SCANNER_VERSION, ScanReport, scan_bundle
from skills_app.infra.queue import SCAN_REVISIONS, hand_over, tasks_run_eagerly
from skills_app.models import RevisionScan, SkillRevision
from skills_app.selectors.revisions import revision_bundle
from skills_app.services.audit import audit_record

logger = logging.getLogger(__name__)

TASK_BATCH = 50
SWEEP_ROUND = 200
SCANNER = Actor.for_system(via="scan")


def scan_wanted(revision_ids: Sequence[str]) -> None:
    """These revisions were stored in the current transaction: scan them once it commits.
    Costs no query and sends nothing now."""
    ids = list(revision_ids)
    if ids:
        transaction.on_commit(lambda: scans_request(ids), robust=True)


def scans_request(revision_ids: Sequence[str]) -> None:
    """After commit: scan now (tasks in-process) or hand to the scan queue
    (``infra.queue.hand_over``). Never raises: the save has committed, and the sweep catches up
    with what could not be handed over."""
    ids = list(revision_ids)
    if not tasks_run_eagerly():
        messages = [[ids[i : i + TASK_BATCH]] for i in range(0, len(ids), TASK_BATCH)]
        hand_over(SCAN_REVISIONS, messages, queue=settings.XMEMO_SCAN_QUEUE)
        return
    try:
        scans_compute(revision_ids=ids)
    except Exception as exc:
        logger.warning("%d revision(s) not scanned yet (%s); the sweep will", len(ids), exc)


def _report(revision: SkillRevision) -> ScanReport:
    return scan_bundle(slug=revision.skill.slug, bundle=revision_bundle(revision))


def _store(revision: SkillRevision, report: ScanReport) -> bool:
    """Store (or replace) the scan of ``revision``; answers whether it was stored anew or
    changed (not when the revision is gone or already holds this version's scan)."""
    with transaction.atomic():
        if not SkillRevision.objects.filter(pk=revision.pk).exists():
            return False
        existing = RevisionScan.objects.select_for_update().filter(revision_id=revision.pk).first()
        if existing is not None and existing.scanner_version == SCANNER_VERSION:
            return False
        values = {
            "verdict": report.verdict,
            "scanner_version": SCANNER_VERSION,
            "scanned_at": timezone.now(),
            "findings": [f.as_dict() for f in report.findings],
        }
        RevisionScan.objects.update_or_create(revision_id=revision.pk, defaults=values)
        # Audited as the scanner's own act; the entry is webhook event ``revision.scanned``.
        audit_record(
            actor=SCANNER,
            workspace=revision.workspace,
            action="skills.revision.scan",
            target_type="revision",
            target_id=revision.revision_id,
            data={
                "verdict": report.verdict,
                "findings": len(report.findings),
                "scanner_version": SCANNER_VERSION,
            },
        )
        return True


def scans_compute(*, revision_ids: Sequence[str]) -> int:
    """The task's work: scan those of ``revision_ids`` not yet scanned by this scanner version.
    Idempotent; answers how many scans it stored."""
    revisions = (
        SkillRevision.objects.filter(revision_id__in=list(revision_ids))
        .exclude(scan__scanner_version=SCANNER_VERSION)
        .select_related("skill", "workspace")
    )
    return sum(_store(revision, _report(revision)) for revision in revisions)


def scans_catch_up(*, limit: int | None = None, grace_seconds: float = 0) -> int:
    """Scan revisions with no scan, or one by another scanner version, oldest first (at most
    ``limit``; those stored in the last ``grace_seconds`` are left to their own task)."""
    todo = SkillRevision.objects.filter(
        Q(scan__isnull=True) | ~Q(scan__scanner_version=SCANNER_VERSION)
    )
    if grace_seconds:
        todo = todo.filter(created_at__lt=timezone.now() - timedelta(seconds=grace_seconds))
    ids = todo.order_by("pk").values_list("revision_id", flat=True)
    return scans_compute(revision_ids=list(ids if limit is None else ids[:limit]))


def scans_sweep() -> int:
    """One bounded round of catch-up (the beat entry ``sweep_scans``)."""
    return scans_catch_up(
        limit=SWEEP_ROUND, grace_seconds=float(settings.XMEMO_OUTBOX_GRACE_SECONDS)
    )


# --- the gate (docs/contract.md §21) ------------------------------------------------------------


def scan_ensure(revision: SkillRevision) -> RevisionScan:
    """The revision's scan, computed now when it is still pending: approval, publication and
    execution wait for it (here, in the request that asks) rather than pass unscanned."""
    scan = RevisionScan.objects.filter(revision_id=revision.pk).first()
    if scan is None:
        _store(revision, _report(revision))
        scan = RevisionScan.objects.get(revision_id=revision.pk)
    return scan


def scan_gate(*, revision: SkillRevision, what: str) -> None:
    """Raise ``ScanBlocked`` when the revision's scan blocks ``what`` (approve, publish, run its
    scripts) and no owner has overridden it."""
    scan = scan_ensure(revision)
    if scan.verdict == RevisionScan.Verdict.BLOCK and scan.override_at is None:
        worst = next((f for f in scan.findings if f.get("severity") in ("critical", "high")), None)
        where = f" ({worst['category']} in {worst['path']} line {worst['line']})" if worst else ""
        raise errors.ScanBlocked(
            f"The scan of this revision blocks it{where}: it cannot be {what} unless an owner "
            "overrides the scan with a reason.",
            details={
                "revision_id": revision.revision_id,
                "verdict": scan.verdict,
                "findings": len(scan.findings),
            },
        )


def scan_override(*, actor: Actor, revision: SkillRevision, reason: str) -> RevisionScan:
    """An owner lets a ``block`` revision through the gate, with a reason (audited)."""
    require_scope(actor, "skills:review")
    require_role(actor, revision.workspace, (OWNER,))
    reason = reason.strip() if isinstance(reason, str) else ""
    if not reason or len(reason) > 2000:
        raise errors.ValidationFailed(
            "An override needs a reason (at most 2,000 characters).", details={"field": "reason"}
        )
    with transaction.atomic():
        scan = scan_ensure(revision)
        scan = RevisionScan.objects.select_for_update().get(pk=scan.pk)
        if scan.verdict != RevisionScan.Verdict.BLOCK:
            raise errors.InvalidTransition(
                f"The scan says {scan.verdict}: there is nothing to override.",
                details={"verdict": scan.verdict},
            )
        scan.override_by = actor.user
        scan.override_actor = actor.label
        scan.override_reason = reason
        scan.override_at = timezone.now()
        scan.save(update_fields=["override_by", "override_actor", "override_reason", "override_at"])
        audit_record(
            actor=actor,
            workspace=revision.workspace,
            action="skills.revision.scan_override",
            target_type="revision",
            target_id=revision.revision_id,
            data={"reason": reason, "findings": len(scan.findings)},
        )
        return scan


def scan_override_restore(
    *, revision: SkillRevision, user: Any, by: str, reason: str, at: datetime
) -> None:
    """A restore's override (an owner restores it, ``services.backup``): the revision is scanned
    now, in the restore's transaction, and the override kept on that scan as it was made."""
    scan = scan_ensure(revision)
    RevisionScan.objects.filter(pk=scan.pk).update(
        override_by=user, override_actor=by, override_reason=reason, override_at=at
    )
