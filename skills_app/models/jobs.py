from __future__ import annotations

from django.conf import settings
from django.db import models

from skills_app.models import ids
from skills_app.models.tenancy import Workspace


class Job(models.Model):
    """A background job (import, export, execute, restore) that the API and console poll."""

    class Kind(models.TextChoices):
        IMPORT = "import"
        EXPORT = "export"
        EXECUTE = "execute"
        RESTORE = "restore"

    class State(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    job_id = models.CharField(max_length=40, unique=True, default=ids.job_id)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="jobs")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED)
    params = models.JSONField(default=dict)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    result = models.JSONField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True)
    log = models.TextField(blank=True, default="")
    attempts = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The token it was started with (none from the console): the job runs as that same actor,
    # so the checks made again when it starts see the token's role and scopes.
    token = models.ForeignKey(
        "skills_app.ApiToken", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When the job was handed to the broker (the outbox mark): a queued job without it is
    # handed over by the sweep (services.outbox.outbox_sweep).
    enqueued_at = models.DateTimeField(null=True, blank=True)
    # Uploaded input and produced output are kept off the main row so polling stays cheap.
    input_data = models.BinaryField(null=True, blank=True)
    input_name = models.CharField(max_length=255, blank=True, default="")
    output_data = models.BinaryField(null=True, blank=True)
    output_name = models.CharField(max_length=255, blank=True, default="")

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["workspace", "-created_at"], name="job_ws_created_idx"),
            models.Index(
                fields=["created_at"],
                name="job_outbox_idx",
                condition=models.Q(state="queued", enqueued_at__isnull=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.job_id} ({self.kind}, {self.state})"
