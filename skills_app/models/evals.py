from __future__ import annotations

from django.conf import settings
from django.db import models

from skills_app.models.skills import SkillRevision
from skills_app.models.tenancy import ApiToken


class RevisionEvaluation(models.Model):
    """A revision's trigger checks (docs/contract.md §22): the figures of its
    ``evals/triggers.json`` against the skills its workspace served (``served_set``, a digest of
    them) when they were computed. Written only by ``services.evals``; derived, so left out of
    backups (a restore computes them anew)."""

    class State(models.TextChoices):
        PENDING = "pending"
        DONE = "done"

    revision = models.OneToOneField(
        SkillRevision, on_delete=models.CASCADE, related_name="evaluation"
    )
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    figures = models.JSONField(default=dict)
    served_set = models.CharField(max_length=64, blank=True, default="")
    served_skills = models.PositiveIntegerField(default=0)
    computed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.revision_id} {self.state}"


class RevisionOutcome(models.Model):
    """How one use of a revision went, as its reporter said (docs/contract.md §22): at most one
    counted per reporter (token, OAuth connection or person) per revision per day (UTC)."""

    class Outcome(models.TextChoices):
        SUCCESS = "success"
        PARTIAL = "partial"
        FAILURE = "failure"

    revision = models.ForeignKey(SkillRevision, on_delete=models.CASCADE, related_name="outcomes")
    date = models.DateField()
    reporter = models.CharField(max_length=64)  # "token:<token_id>" or "user:<pk>"
    client_name = models.CharField(max_length=100)
    token = models.ForeignKey(ApiToken, null=True, blank=True, on_delete=models.SET_NULL)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    note = models.TextField(blank=True, default="")
    reported_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["revision", "date", "reporter"], name="outcome_one_per_reporter_day"
            )
        ]

    def __str__(self) -> str:
        return f"{self.revision_id} {self.date} {self.outcome}"
