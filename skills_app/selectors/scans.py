"""A revision's scan, the read side (docs/contract.md §21): the answer of ``GET
/v1/revisions/{id}/scan``, its SARIF form, and the short form Level 1 and the bundle carry."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypedDict
from urllib.parse import quote

from skills_app.access import Actor, require_scope, revision_for
from skills_app.domain.scan.sarif import scan_sarif
from skills_app.models import RevisionScan, SkillRevision

PENDING = "pending"


class ScanOverride(TypedDict):
    by: str
    reason: str
    at: str


class ScanAnswer(TypedDict):
    verdict: str
    scanner_version: str | None
    scanned_at: str | None
    findings: list[dict[str, Any]]
    override: ScanOverride | None


def _override(scan: RevisionScan) -> ScanOverride | None:
    if scan.override_at is None:
        return None
    return {
        "by": scan.override_actor,
        "reason": scan.override_reason,
        "at": scan.override_at.isoformat(),
    }


def scan_answer(scan: RevisionScan | None) -> ScanAnswer:
    """The scan answer of a stored scan, or the pending one."""
    if scan is None:
        return {
            "verdict": PENDING,
            "scanner_version": None,
            "scanned_at": None,
            "findings": [],
            "override": None,
        }
    return {
        "verdict": scan.verdict,
        "scanner_version": scan.scanner_version,
        "scanned_at": scan.scanned_at.isoformat(),
        "findings": list(scan.findings),
        "override": _override(scan),
    }


def stored_scan(revision: SkillRevision) -> RevisionScan | None:
    return RevisionScan.objects.filter(revision_id=revision.pk).first()


def revision_scan(*, actor: Actor, revision_id: str) -> ScanAnswer:
    """``GET /v1/revisions/{id}/scan``: 200 with ``verdict: "pending"`` until it is done."""
    require_scope(actor, "skills:read")
    return scan_answer(stored_scan(revision_for(actor, revision_id)))


def revision_scan_sarif(*, actor: Actor, revision_id: str) -> dict[str, Any]:
    """``GET /v1/revisions/{id}/scan.sarif``: the same findings as SARIF 2.1.0."""
    require_scope(actor, "skills:read")
    revision = revision_for(actor, revision_id)
    answer = scan_answer(stored_scan(revision))
    return scan_sarif(
        findings=answer["findings"],
        scanner_version=answer["scanner_version"] or "xmemo-scan",
        revision_id=revision.revision_id,
        verdict=answer["verdict"],
        skill_uri=(
            f"skill://{quote(revision.workspace.slug, safe='')}/{revision.revision_id}/"
            f"{revision.skill.slug}/"
        ),
    )


def scan_summary(revision: SkillRevision) -> dict[str, Any]:
    """The short form Level 1, the bundle and MCP's ``io.xmemo/scan`` carry: exactly
    ``{verdict, findings, scanner_version}`` (docs/contract.md §21); an override is read from
    the scan answer."""
    return scan_summaries([revision.pk])[revision.pk]


def scan_summaries(revision_pks: Iterable[int]) -> dict[int, dict[str, Any]]:
    """``scan_summary`` of each revision, in one query (a page of MCP entries)."""
    wanted = list(revision_pks)
    stored = {
        scan.revision_id: scan for scan in RevisionScan.objects.filter(revision_id__in=wanted)
    }
    summaries = {}
    for pk in wanted:
        answer = scan_answer(stored.get(pk))
        summaries[pk] = {
            "verdict": answer["verdict"],
            "findings": answer["findings"],
            "scanner_version": answer["scanner_version"],
        }
    return summaries
