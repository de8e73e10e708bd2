from __future__ import annotations

from django.conf import settings
from django.db import models

from skills_app.models.skills import SkillRevision


class RevisionScan(models.Model):
    """The scan of one revision (docs/contract.md §21): its verdict and findings, with the
    scanner version that made them. No row means the scan is pending. A revision is immutable,
    so it is scanned once per scanner version; an owner's override of a ``block`` stays across
    rescans (it is a decision about the revision, audited)."""

    class Verdict(models.TextChoices):
        CLEAN = "clean"
        WARN = "warn"
        BLOCK = "block"

    revision = models.OneToOneField(
        SkillRevision, on_delete=models.CASCADE, related_name="scan", primary_key=True
    )
    verdict = models.CharField(max_length=8, choices=Verdict.choices)
    scanner_version = models.CharField(max_length=100)
    scanned_at = models.DateTimeField()
    findings = models.JSONField(default=list)
    override_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Who overrode, as text (a workspace token's ``token:<name>``, or a user's name).
    override_actor = models.CharField(max_length=200, blank=True, default="")
    override_reason = models.TextField(blank=True, default="")
    override_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["scanner_version"], name="scan_version_idx")]

    def __str__(self) -> str:
        return f"{self.revision_id}: {self.verdict}"
