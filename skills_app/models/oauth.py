"""The link between an OAuth client's tokens and the product's own grant record.

A user's consent to one OAuth application is an ``ApiToken`` (scopes, workspace restriction,
client profile, last use, revocation) that is never shown as a secret; the OAuth access tokens
the application holds act through it. So the tenant gate, profiles and rate limits see an
ordinary API token and need no OAuth branch, and revoking the token on the console's tokens
page ends the connection.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from oauth2_provider.settings import APPLICATION_MODEL

from skills_app.models.tenancy import ApiToken


class OAuthConnection(models.Model):
    """One user's standing consent to one OAuth application (a re-consent replaces it)."""

    application = models.ForeignKey(
        APPLICATION_MODEL, on_delete=models.CASCADE, related_name="xmemo_connections"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oauth_connections"
    )
    api_token = models.OneToOneField(
        ApiToken, on_delete=models.CASCADE, related_name="oauth_connection"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["application", "user"], name="uniq_oauth_connection"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}->{self.application_id}"
