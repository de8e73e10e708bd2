"""The console's consent page: django-oauth-toolkit's authorization view, with the product's
choices (workspace or all, scopes, client profile) turned into the consent's ``ApiToken``.

The library validates the client, the registered redirect URI (loopback on any port, RFC 8252)
and PKCE; this view adds: S256 only, the ``resource`` must be this server (RFC 8707,
``invalid_target``), and the consent must fit the user's role (``invalid_scope``). Refusals,
denials included, store nothing but an audit entry.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django import forms
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.forms import AllowForm
from oauth2_provider.views import (
    AuthorizationView,
    DynamicClientRegistrationManagementView,
    DynamicClientRegistrationView,
)
from oauth2_provider.views import dynamic_client_registration as dcr
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from skills_app import errors
from skills_app.access import SCOPES, Actor, readable_workspaces
from skills_app.console.base import CONTENT_SECURITY_POLICY, client_ip, with_security_headers
from skills_app.domain import lifecycle
from skills_app.mcp_profiles import DEFAULT_PROFILE, profile_choices
from skills_app.models import Workspace
from skills_app.oauth.redirects import registration_refusal
from skills_app.oauth.resource import mcp_resource, request_origin, resource_allowed
from skills_app.selectors.oauth import oauth_application
from skills_app.services import oauth as oauth_services

ALL_WORKSPACES = ""


def _csp_source(redirect_uri: str) -> str:
    parts = urlsplit(redirect_uri)
    if parts.scheme in ("http", "https"):
        return f"{parts.scheme}://{parts.netloc}"
    return f"{parts.scheme}:"  # a native app's private-use scheme


class ConsentForm(AllowForm):
    """The library's hidden authorization fields plus what the user chooses."""

    scope = forms.CharField(required=False, widget=forms.HiddenInput())
    scopes = forms.MultipleChoiceField(
        required=False,
        choices=[(s, s) for s in SCOPES],
        widget=forms.CheckboxSelectMultiple,
    )
    workspace = forms.ChoiceField(required=False)
    profile = forms.ChoiceField()

    def __init__(self, *args: Any, workspaces: list[Workspace], origin: str, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.origin = origin
        self.workspaces = workspaces
        self.fields["workspace"].choices = [(ALL_WORKSPACES, "All my workspaces")] + [
            (w.slug, f"{w.name} ({w.slug})") for w in workspaces
        ]
        self.fields["profile"].choices = profile_choices()

    def chosen_workspace(self) -> Workspace | None:
        """The workspace chosen (one of the choices, so one the user reads), or None for all."""
        slug = self.cleaned_data.get("workspace") or ALL_WORKSPACES
        return next((w for w in self.workspaces if w.slug == slug), None) if slug else None

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("allow") and not data.get("scopes"):
            self.add_error("scopes", "Choose at least one scope.")
        data["scope"] = " ".join(data.get("scopes") or [])
        resources = (data.get("resource") or "").split()
        if not all(resource_allowed(r, self.origin) for r in resources):
            raise forms.ValidationError("The resource is not this server.")
        return data


class ConsentView(AuthorizationView):
    template_name = "console/oauth/consent.html"
    form_class = ConsentForm

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        response: HttpResponseBase = super().dispatch(request, *args, **kwargs)
        response["Cache-Control"] = "no-store"
        return with_security_headers(response)

    def _actor(self) -> Actor:
        return Actor(user=self.request.user, via="console", ip=client_ip(self.request))

    def get_form_kwargs(self) -> dict[str, Any]:
        kwargs = super().get_form_kwargs()
        kwargs["workspaces"] = list(readable_workspaces(self._actor(), include_disabled=True))
        kwargs["origin"] = request_origin(self.request)
        return kwargs

    def get_initial(self) -> dict[str, Any]:
        initial = super().get_initial()
        requested = initial["scope"].split()
        # Powerful scopes start unchecked: approving as shown never grants them (issue 37 #13).
        ordinary = [s for s in requested if s in SCOPES and s not in lifecycle.POWERFUL_SCOPES]
        initial["scopes"] = ordinary or [lifecycle.READ]
        # RFC 8707: a client that names no resource still gets a token bound to this server.
        initial["resource"] = initial.get("resource") or mcp_resource(request_origin(self.request))
        initial["profile"] = DEFAULT_PROFILE
        initial["workspace"] = ALL_WORKSPACES
        return initial

    def _refuse(self, error: str, description: str, credentials: dict[str, Any]) -> HttpResponse:
        """An error redirect to the client (its redirect URI has been validated)."""
        application = oauth_application(client_id=credentials["client_id"])
        oauth_error = CustomOAuth2Error(
            error=error, description=description, state=credentials.get("state")
        )
        response: HttpResponse = self.error_response(
            OAuthToolkitError(error=oauth_error, redirect_uri=credentials["redirect_uri"]),
            application,
        )
        return response

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            _scopes, credentials = self.validate_authorization_request(request)
        except OAuthToolkitError as error:
            response: HttpResponse = self.error_response(error, application=None)
            return response
        if credentials.get("code_challenge_method") != "S256":
            return self._refuse(
                "invalid_request", "PKCE with code_challenge_method S256 is required.", credentials
            )
        origin = request_origin(request)
        if not all(resource_allowed(r, origin) for r in request.GET.getlist("resource")):
            return self._refuse(
                "invalid_target", f"The resource must be {mcp_resource(origin)}.", credentials
            )
        response = super().get(request, *args, **kwargs)
        # The approval form's POST is answered by a redirect to the client, which the console's
        # ``form-action 'self'`` would block: allow exactly the validated redirect URI's origin.
        response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY.replace(
            "form-action 'self'",
            f"form-action 'self' {_csp_source(credentials['redirect_uri'])}",
        )
        return response

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        application = context.get("application")
        redirect_uri = context.get("redirect_uri") or ""
        if application is not None:
            context["client"] = oauth_services.client_summary(application, redirect_uri)
        form = context.get("form")
        requested = (form["scope"].value() or "").split() if form is not None else []
        context["powerful_scopes"] = [
            (scope, what) for scope, what in lifecycle.POWERFUL_SCOPES.items() if scope in requested
        ]
        return context

    def form_invalid(self, form: Any) -> HttpResponse:
        response: HttpResponse = super().form_invalid(form)
        response.status_code = 400
        return response

    def form_valid(self, form: ConsentForm) -> HttpResponse:
        data = form.cleaned_data
        application = oauth_application(client_id=data["client_id"])
        if application is None or not application.redirect_uri_allowed(data["redirect_uri"]):
            response: HttpResponse = super().form_valid(form)  # the library's own refusal
            return response
        actor = self._actor()
        workspace = form.chosen_workspace()

        def record_refusal(error: str, reason: str) -> None:
            oauth_services.consent_refusal_record(
                actor=actor,
                application=application,
                redirect_uri=data["redirect_uri"],
                workspace=workspace,
                error=error,
                reason=reason,
            )

        if not data.get("allow"):
            record_refusal("access_denied", "The user denied the request.")
            response = super().form_valid(form)  # the library answers access_denied
            return response
        try:
            with transaction.atomic():
                oauth_services.connection_grant(
                    actor=actor,
                    application=application,
                    redirect_uri=data["redirect_uri"],
                    scopes=data["scopes"],
                    workspace=workspace,
                    profile=data["profile"],
                )
                response = super().form_valid(form)
                if self.success_url is None:  # the library refused: keep nothing of the consent
                    transaction.set_rollback(True)
                return response
        except (errors.PermissionDenied, errors.NotFound, errors.ValidationFailed) as exc:
            record_refusal("invalid_scope", exc.message)
            credentials = {key: data.get(key) for key in ("client_id", "redirect_uri", "state")}
            return self._refuse("invalid_scope", exc.message, credentials)


# The rule hooks the handlers, not ``dispatch``: the library marks its ``dispatch`` CSRF-exempt
# (a registration is an API call without cookies), which an override would lose.
class RegistrationView(DynamicClientRegistrationView):
    """The library's registration, its parsing and answer unchanged, storing the client through
    :func:`skills_app.services.oauth.oauth_client_register` (the public-client rule)."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        refusal = registration_refusal(request)
        if refusal is not None:
            return refusal
        if not dcr._check_permissions(request):
            return dcr._error_response(
                "access_denied", "Authentication required to register a client", status=401
            )
        data, error = dcr._parse_metadata(request.body)
        if error:
            return error
        fields, error = dcr._build_application_kwargs(data)
        if error:
            return error
        user = request.user if request.user.is_authenticated else None
        try:
            registered = oauth_services.oauth_client_register(user=user, fields=fields)
        except ValidationError as exc:
            return dcr._error_response(
                "invalid_client_metadata", dcr._validation_error_description(exc)
            )
        body = dcr._application_to_response(
            registered.application, registered.registration_token, request
        )
        if registered.client_secret:
            body["client_secret"] = registered.client_secret
        return JsonResponse(body, status=201)


class RegistrationManagementView(DynamicClientRegistrationManagementView):
    def put(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        refusal = registration_refusal(request)
        response: HttpResponse = refusal or super().put(request, *args, **kwargs)
        return response
