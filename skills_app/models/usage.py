from __future__ import annotations

from django.db import models

from skills_app.models.skills import SkillRevision


class UsageDay(models.Model):
    """How often one revision was recalled on one day (UTC) by one client (docs/contract.md §19):
    the API token's name, an OAuth connection's ``OAuth: <client name>``, or ``console``.

    Telemetry, not content: written only by the usage flush (``services/usage.py``), added to
    with an upsert, and left out of workspace backups.
    """

    revision = models.ForeignKey(SkillRevision, on_delete=models.CASCADE, related_name="usage")
    date = models.DateField()
    client_name = models.CharField(max_length=100)
    level1 = models.PositiveBigIntegerField(default=0)
    level2 = models.PositiveBigIntegerField(default=0)
    last_recalled_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["revision", "date", "client_name"], name="usage_day_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.revision_id} {self.date} {self.client_name}"
