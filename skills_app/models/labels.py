"""Labels (docs/contract.md §18): a named, movable pointer from a skill to one of its revisions."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from skills_app.models.skills import Skill, SkillRevision
from skills_app.models.tenancy import Workspace


class SkillLabel(models.Model):
    """``staging``, ``production``, ``canary``, …: one revision per (skill, name), enforced by
    the database. ``moved_by``/``moved_at`` say who pointed it where it points now."""

    skill = models.ForeignKey(Skill, on_delete=models.CASCADE, related_name="labels")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=32)
    revision = models.ForeignKey(SkillRevision, on_delete=models.CASCADE, related_name="labels")
    moved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    moved_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["skill", "name"], name="uniq_label_per_skill"),
            # domain.labels.LABEL_NAME and RESERVED_LABELS, held by the database too.
            models.CheckConstraint(
                condition=models.Q(name__regex=r"^[a-z][a-z0-9-]{0,31}$")
                & ~models.Q(name__in=["published", "latest"]),
                name="label_name_valid",
            ),
        ]
        indexes = [models.Index(fields=["revision"], name="label_revision_idx")]

    def __str__(self) -> str:
        return f"{self.skill_id}:{self.name}"
