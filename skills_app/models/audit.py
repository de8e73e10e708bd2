from __future__ import annotations

from django.conf import settings
from django.db import models

from skills_app.models.tenancy import Workspace


class AuditEntry(models.Model):
    """Who did what, when, from where. Written in the same transaction as the change.

    Rows keep ``target_id`` and a ``data`` snapshot as plain values, so an entry outlives the
    object it describes (deleting a skill leaves its tombstone here)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="audit_entries")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_label = models.CharField(max_length=150, blank=True, default="")
    action = models.CharField(max_length=64)
    target_type = models.CharField(max_length=32, blank=True, default="")
    target_id = models.CharField(max_length=64, blank=True, default="")
    data = models.JSONField(default=dict)
    ip = models.GenericIPAddressField(null=True, blank=True)
    via = models.CharField(max_length=16, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["workspace", "-created_at"], name="audit_ws_created_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.action} by {self.actor_label} on {self.target_id}"
