"""The review conversation of a revision (docs/contract.md §16): comments and recorded approvals."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from skills_app.models import ids
from skills_app.models.skills import SkillRevision
from skills_app.models.tenancy import Workspace, acted_by


def comment_id() -> str:
    return ids.new_public_id("cmt")


class RevisionComment(models.Model):
    """One comment on a revision: Markdown ``body``, optionally anchored to a ``line`` of the
    revision's instruction body. Comments are never edited (the thread is a record)."""

    comment_id = models.CharField(max_length=40, unique=True, default=comment_id)
    revision = models.ForeignKey(SkillRevision, on_delete=models.CASCADE, related_name="comments")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A restored commenter who is no member of the team: their name as text (docs/backup.md).
    imported_author = models.CharField(max_length=150, null=True, blank=True)  # noqa: DJ001
    # A workspace token that wrote it: it acts as itself (docs/contract.md §16).
    author_token = models.ForeignKey(
        "skills_app.ApiToken", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    body = models.TextField()
    line = models.PositiveIntegerField(null=True, blank=True)
    # Which lifecycle action the comment came with ("" for a plain comment): request_changes
    # and reject put their required comment into the thread.
    action = models.CharField(max_length=32, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "pk"]
        indexes = [models.Index(fields=["revision", "created_at"], name="comment_rev_time_idx")]

    def __str__(self) -> str:
        return self.comment_id

    @property
    def author_label(self) -> str | None:
        return acted_by(self.author, self.author_token)


class RevisionApproval(models.Model):
    """One reviewer's approval of a revision (who, when). A revision is published when the
    workspace's ``required_approvals`` distinct eligible reviewers have approved it since it was
    last proposed."""

    revision = models.ForeignKey(SkillRevision, on_delete=models.CASCADE, related_name="approvals")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A restored approver who is no member of the team: a name, never counted as an approval.
    imported_user = models.CharField(max_length=150, null=True, blank=True)  # noqa: DJ001
    # An admin workspace token that approved: a reviewer of its own (docs/contract.md §16).
    token = models.ForeignKey(
        "skills_app.ApiToken", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.revision_id}:{self.user_id}"


class NotificationPreference(models.Model):
    """Which review e-mails a user wants (docs/contract.md §16); no row = all of them."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_preference"
    )
    # As a reviewer: a revision was proposed in a team I review for.
    review_requests = models.BooleanField(default=True)
    # As an author: my revision was approved, rejected, sent back, or commented on.
    review_outcomes = models.BooleanField(default=True)
    comments = models.BooleanField(default=True)

    def __str__(self) -> str:
        return f"notifications:{self.user_id}"
