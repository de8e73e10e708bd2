"""Reads of the OAuth clients django-oauth-toolkit registered (docs/contract.md §12)."""

from __future__ import annotations

from oauth2_provider.models import AbstractApplication, get_application_model


def oauth_application(*, client_id: str) -> AbstractApplication | None:
    """The registered client ``client_id`` names, or None. Clients belong to no workspace: the
    consent page and the token endpoint look them up by their public id."""
    application: AbstractApplication | None = (
        get_application_model().objects.filter(client_id=client_id).first()
    )
    return application
