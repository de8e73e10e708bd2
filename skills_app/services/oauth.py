"""Consent to an OAuth client (docs/contract.md §12): the product side of django-oauth-toolkit's
flow.

Approving a client makes an ``ApiToken`` with the consented scopes, workspace and profile and
links it to the (user, application) pair; the OAuth access tokens of that pair act through it.
A new consent for the same pair replaces the old one: the old token is revoked and the old OAuth
tokens deleted, so they can never pick up the new limits.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from oauth2_provider.models import (
    AbstractApplication,
    AccessToken,
    Application,
    Grant,
    RefreshToken,
)
from oauth2_provider.settings import oauth2_settings

# The library's own issuing of the RFC 7592 registration token (hashed at rest, its expiry
# setting), reused rather than copied; tests/oauth fail if it goes.
from oauth2_provider.views.dynamic_client_registration import _issue_registration_token

from skills_app import errors
from skills_app.access import ADMIN_ROLES, Actor, require_role
from skills_app.models import ApiToken, OAuthConnection, Workspace
from skills_app.services.accounts import token_create, token_revoke
from skills_app.services.audit import audit_record

# Scopes whose every use needs an admin role: consent refuses them to a plain member.
ADMIN_SCOPES = frozenset({"skills:review", "workspace:admin"})


def client_summary(application: AbstractApplication, redirect_uri: str) -> dict[str, str]:
    """What the audit log and the consent page say about a client."""
    return {
        "client_id": application.client_id,
        "client_name": application.name or application.client_id,
        "redirect_host": urlsplit(redirect_uri).hostname or "",
    }


def _audit_workspace(actor: Actor, workspace: Workspace | None) -> Workspace:
    assert actor.user is not None
    return workspace or Workspace.objects.get(slug=actor.user.get_username())


@transaction.atomic
def connection_grant(
    *,
    actor: Actor,
    application: AbstractApplication,
    redirect_uri: str,
    scopes: list[str],
    workspace: Workspace | None,
    profile: str,
) -> ApiToken:
    """Record a signed-in user's consent; PermissionDenied/NotFound/ValidationFailed refuse it."""
    if actor.user is None or actor.token is not None:
        raise errors.PermissionDenied("Only a signed-in person can connect an application.")
    if workspace is not None:
        role = require_role(actor, workspace)
        too_wide = sorted(ADMIN_SCOPES.intersection(scopes)) if role not in ADMIN_ROLES else []
        if too_wide:
            raise errors.PermissionDenied(
                f"Your role in '{workspace.slug}' ({role}) does not allow {', '.join(too_wide)}.",
                details={"scopes": too_wide, "role": role},
            )
    previous = (
        OAuthConnection.objects.select_for_update()
        .select_related("api_token")
        .filter(application=application, user=actor.user)
        .first()
    )
    if previous is not None:
        token_revoke(actor=actor, token=previous.api_token)
        RefreshToken.objects.filter(application=application, user=actor.user).delete()
        AccessToken.objects.filter(application=application, user=actor.user).delete()
        previous.delete()
    client = client_summary(application, redirect_uri)
    token, _secret = token_create(  # the secret is never shown: OAuth tokens act through the row
        actor=actor,
        user=actor.user,
        name=f"OAuth: {client['client_name']}"[:100],
        scopes=scopes,
        workspace=workspace,
        profile=profile,
    )
    OAuthConnection.objects.create(application=application, user=actor.user, api_token=token)
    audit_record(
        actor=actor,
        workspace=_audit_workspace(actor, workspace),
        action="oauth.consent.approve",
        target_type="token",
        target_id=token.token_id,
        data={**client, "scopes": token.scopes, "profile": profile},
    )
    return token


@transaction.atomic
def consent_refusal_record(
    *,
    actor: Actor,
    application: AbstractApplication,
    redirect_uri: str,
    workspace: Workspace | None,
    error: str,
    reason: str,
) -> None:
    """Audit a denied or refused consent in the workspace it concerned (nothing else stored)."""
    if workspace is not None and actor.role_in(workspace) is None:
        return  # not the user's workspace: nothing of it may be written
    audit_record(
        actor=actor,
        workspace=_audit_workspace(actor, workspace),
        action="oauth.consent.refuse",
        target_type="oauth_client",
        target_id=application.client_id,
        data={**client_summary(application, redirect_uri), "error": error, "reason": reason},
    )


@transaction.atomic
def refresh_replay_record(*, application: AbstractApplication, user_id: int) -> None:
    """Audit a replayed refresh token (the library has revoked its whole family)."""
    connection = (
        OAuthConnection.objects.select_related("api_token__workspace", "user")
        .filter(application=application, user_id=user_id)
        .first()
    )
    if connection is None:
        return
    actor = Actor(user=connection.user, token=connection.api_token, via="oauth")
    audit_record(
        actor=actor,
        workspace=_audit_workspace(actor, connection.api_token.workspace),
        action="oauth.refresh.replay",
        target_type="token",
        target_id=connection.api_token.token_id,
        data={"client_id": application.client_id, "family_revoked": True},
    )


def public_client_prepare(*, application: AbstractApplication) -> None:
    """The public-client rule, applied by whatever stores a new client (registration here, the
    admin's add form): a public client (``token_endpoint_auth_method`` none, as MCP clients
    register) never authenticates with a secret, so it is given none: no slow password hash on
    open registration, no secret at rest."""
    if application._state.adding and application.client_type == AbstractApplication.CLIENT_PUBLIC:
        application.client_secret = ""
        application.hash_client_secret = False


@dataclass(frozen=True)
class ClientRegistration:
    """A client stored by dynamic registration (RFC 7591): the row, the secret of a
    confidential client (shown once, in the answer) and the RFC 7592 registration token."""

    application: AbstractApplication
    client_secret: str | None
    registration_token: str


def oauth_client_register(*, user: User | None, fields: dict[str, Any]) -> ClientRegistration:
    """Store a dynamically registered client from the library's RFC 7591 fields (the metadata
    already parsed by it); raises Django's ``ValidationError`` for metadata the model refuses,
    which the registration view answers as ``invalid_client_metadata``."""
    application = Application(
        user=user, registration_source=Application.RegistrationSource.DCR, **fields
    )
    # A confidential client's secret is shown once, before saving hashes it.
    secret = (
        application.client_secret
        if application.client_type == AbstractApplication.CLIENT_CONFIDENTIAL
        else None
    )
    application.full_clean()
    public_client_prepare(application=application)
    with transaction.atomic():
        application.save()
        token: str = _issue_registration_token(application, user)
    return ClientRegistration(
        application=application, client_secret=secret, registration_token=token
    )


@transaction.atomic
def oauth_clients_expire() -> int:
    """Delete the registered clients never used (docs/contract.md §16b): older than
    ``XMEMO_OAUTH_UNUSED_CLIENT_HOURS`` with no consent, grant or token ever issued (the RFC 7592
    registration token every registration gets does not count). Answers how many went."""
    cutoff = timezone.now() - timedelta(hours=settings.XMEMO_OAUTH_UNUSED_CLIENT_HOURS)
    issued = AccessToken.objects.filter(application=OuterRef("pk")).exclude(
        scope=oauth2_settings.DCR_REGISTRATION_SCOPE
    )
    unused = (
        Application.objects.filter(created__lt=cutoff)
        .exclude(Exists(OAuthConnection.objects.filter(application=OuterRef("pk"))))
        .exclude(Exists(Grant.objects.filter(application=OuterRef("pk"))))
        .exclude(Exists(issued))
        .exclude(Exists(RefreshToken.objects.filter(application=OuterRef("pk"))))
    )
    ids = list(unused.values_list("pk", flat=True))
    Application.objects.filter(pk__in=ids).delete()  # their registration tokens go with them
    return len(ids)
