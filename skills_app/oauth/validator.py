"""django-oauth-toolkit's validator with the product's rules on the token endpoint."""

from __future__ import annotations

import hashlib
from typing import Any

from oauth2_provider.models import RefreshToken
from oauth2_provider.oauth2_validators import OAuth2Validator

from skills_app.models import OAuthConnection
from skills_app.oauth.redirects import plaintext_off_loopback
from skills_app.services.oauth import refresh_replay_record


class ConnectionValidator(OAuth2Validator):
    def validate_redirect_uri(
        self, client_id: str, redirect_uri: str, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        """Registration refuses plaintext redirects off loopback; a row that holds one anyway
        (written before that rule, or by hand) is not redirected to either."""
        if plaintext_off_loopback([redirect_uri]):
            return False
        return bool(
            super().validate_redirect_uri(client_id, redirect_uri, request, *args, **kwargs)
        )

    def get_default_redirect_uri(
        self, client_id: str, request: Any, *args: Any, **kwargs: Any
    ) -> Any:
        """The same rule when the request names no redirect URI and the registered one is used."""
        uri = super().get_default_redirect_uri(client_id, request, *args, **kwargs)
        return None if uri and plaintext_off_loopback([uri]) else uri

    def validate_refresh_token(
        self, refresh_token: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        """The library's checks (expiry, rotation; a replayed token revokes its whole family),
        then: the consent behind it must still stand (revoked on the tokens page = no refresh)."""
        if not super().validate_refresh_token(refresh_token, client, request, *args, **kwargs):
            checksum = hashlib.sha256(refresh_token.encode("utf-8")).hexdigest()
            replayed = (
                RefreshToken.objects.filter(token_checksum=checksum, revoked__isnull=False)
                .select_related("application")
                .first()
            )
            if replayed is not None and replayed.user_id is not None:
                refresh_replay_record(application=replayed.application, user_id=replayed.user_id)
            return False
        return OAuthConnection.objects.filter(
            application=client, user=request.user, api_token__revoked_at__isnull=True
        ).exists()
