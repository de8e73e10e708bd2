"""An OAuth access token → the ``ApiToken`` of the consent behind it, for ``gateway.auth``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from oauth2_provider.models import AccessToken
from oauth2_provider.settings import oauth2_settings

from skills_app.models import ApiToken, OAuthConnection


@dataclass(frozen=True)
class OAuthAccess:
    token: ApiToken
    expires: datetime
    resources: tuple[str, ...]


def access_for(checksum: str) -> OAuthAccess | None:
    """The access token whose SHA-256 is ``checksum`` (the library stores exactly that), or None
    when it does not exist or its consent is gone."""
    row = (
        AccessToken.objects.filter(token_checksum=checksum, user__isnull=False)
        # RFC 7592 registration-management tokens are not access to this resource.
        .exclude(scope=oauth2_settings.DCR_REGISTRATION_SCOPE)
        .values("user_id", "application_id", "expires", "resource")
        .first()
    )
    if row is None:
        return None
    connection = (
        OAuthConnection.objects.select_related("api_token__user", "api_token__workspace")
        .filter(user_id=row["user_id"], application_id=row["application_id"])
        .first()
    )
    if connection is None:
        return None
    connection.api_token.oauth_access_expires = row["expires"]
    return OAuthAccess(
        token=connection.api_token,
        expires=row["expires"],
        resources=tuple(row["resource"] or ()),
    )
