from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import models

from skills_app.domain.permission_modes import DEFAULT_PERMISSION_MODE, PERMISSION_MODES
from skills_app.domain.tokens import token_attribution
from skills_app.mcp_profiles import DEFAULT_PROFILE
from skills_app.models import ids


def default_skills_enabled() -> bool:
    return bool(settings.XMEMO_SKILLS_DEFAULT_ENABLED)


class Workspace(models.Model):
    """The tenant. Every skill, revision, job and audit entry belongs to exactly one."""

    class Kind(models.TextChoices):
        PERSONAL = "personal"
        TEAM = "team"

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    cloud_skills_enabled = models.BooleanField(default=default_skills_enabled)
    # On for every new team (docs/contract.md §16): an author never approves their own proposal
    # unless the team (meant for a team of one) switches it off. Rows made before 0019 keep
    # their value.
    require_distinct_reviewer = models.BooleanField(default=True)
    allow_dangerous_scripts = models.BooleanField(default=False)
    # How many distinct reviewers (never the author) must approve a team revision (docs/contract.md
    # §16).
    required_approvals = models.PositiveSmallIntegerField(default=1)
    # Dual sign-off (docs/contract.md §21): what the team's scripts may do, by class.
    permission_mode = models.CharField(
        max_length=24,
        choices=[(m, m) for m in PERMISSION_MODES],
        default=DEFAULT_PERMISSION_MODE,
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    @property
    def is_personal(self) -> bool:
        return self.kind == self.Kind.PERSONAL

    @property
    def reviewer_must_differ(self) -> bool:
        """Whether an author may not approve their own revision: the team says so, or it needs
        several approvals (the author's never counts towards them)."""
        return self.require_distinct_reviewer or self.required_approvals > 1


class Membership(models.Model):
    class Role(models.TextChoices):
        OWNER = "owner"
        ADMIN = "admin"
        MEMBER = "member"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "user"], name="uniq_membership"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}@{self.workspace_id}:{self.role}"


class ApiToken(models.Model):
    """A bearer token. Only a SHA-256 of the secret is stored (tokens carry 256 random bits,
    so a fast hash is safe and keeps authentication to one indexed lookup).

    A token with a ``role`` belongs to its ``workspace``, not to a person (docs/contract.md §16): a
    service account whose role there — not ``user``'s membership — bounds what it may do.
    ``user`` is then only who created it; it keeps working when they leave the team.
    """

    token_id = models.CharField(max_length=40, unique=True, default=ids.token_id)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16)
    secret_hash = models.CharField(max_length=64, unique=True)
    scopes = models.JSONField(default=list)
    workspace = models.ForeignKey(
        Workspace, null=True, blank=True, on_delete=models.CASCADE, related_name="tokens"
    )
    client_profile = models.CharField(max_length=40, default=DEFAULT_PROFILE)
    # "" for a person's token; "member" or "admin" for a token owned by ``workspace``.
    role = models.CharField(max_length=16, blank=True, default="")
    # A mode stricter than the workspace's, or "" for none of its own (docs/contract.md §21).
    permission_mode = models.CharField(max_length=24, blank=True, default="")
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # A token minted with an OAuth access token (or with a token minted so): the consent token of
    # that OAuth connection, whose revocation revokes this one too (docs/contract.md §16b).
    minted_through = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="minted"
    )
    # Not stored: set on the consent token by ``oauth.tokens`` while it acts for an OAuth access
    # token, to that access token's own expiry, which bounds what it mints.
    oauth_access_expires: datetime | None = None

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(role="")
                | models.Q(role__in=["member", "admin"], workspace__isnull=False),
                name="workspace_token_has_role_and_workspace",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.token_id} ({self.name})"

    @property
    def owned_by_workspace(self) -> bool:
        return bool(self.role)


def acted_by(user: Any, token: ApiToken | None) -> str | None:
    """The name shown for who wrote or decided something: ``token:<name>`` for a workspace token,
    which acts as itself (docs/contract.md §16), else the username; None for nobody."""
    if token is not None:
        return token_attribution(token.name)
    return user.get_username() if user is not None else None


class WorkspaceSecret(models.Model):
    """A value a workspace's scripts may receive (docs/contract.md §2, §13), stored only encrypted.

    ``ciphertext`` is a Fernet token (see ``skills_app.infra.crypto``); the plain value is never
    stored, logged, audited or answered.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="secrets")
    name = models.CharField(max_length=128)
    ciphertext = models.TextField()
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "name"], name="uniq_workspace_secret"),
        ]

    def __str__(self) -> str:
        return f"{self.workspace_id}:{self.name}"


class Invitation(models.Model):
    """An invitation of an e-mail address into a team. The link carries a random token; only
    its SHA-256 is stored (like API tokens), so a database read cannot accept an invitation.
    Single use: ``accepted_at`` is set once; ``revoked_at`` ends it early."""

    invitation_id = models.CharField(max_length=40, unique=True, default=ids.invitation_id)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=16, choices=Membership.Role.choices)
    token_hash = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.invitation_id} ({self.email} → {self.workspace_id})"
