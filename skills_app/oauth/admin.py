"""The library's Application admin with the loopback-only rule for plaintext redirect URIs
(``OAUTH2_PROVIDER["APPLICATION_ADMIN_CLASS"]``; the rule is :mod:`skills_app.oauth.redirects`)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.http import HttpRequest
from oauth2_provider.admin import ApplicationAdmin
from oauth2_provider.forms import ApplicationForm

from skills_app.oauth.redirects import plaintext_off_loopback
from skills_app.services.oauth import public_client_prepare


class LoopbackOnlyApplicationForm(ApplicationForm):
    def clean_redirect_uris(self) -> str:
        value: str = self.cleaned_data["redirect_uris"]
        refused = plaintext_off_loopback(value.split())
        if refused:
            raise forms.ValidationError(
                "Plaintext http redirect URIs must be loopback: %(uris)s",
                code="invalid_redirect_uri",
                params={"uris": " ".join(refused)},
            )
        return value


class LoopbackOnlyApplicationAdmin(ApplicationAdmin):
    form = LoopbackOnlyApplicationForm

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """A public client added here is stored without a secret, as registration stores it."""
        public_client_prepare(application=obj)
        super().save_model(request, obj, form, change)
