"""A workspace's settings page: name, review and script flags, and write-only secrets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse

from skills_app import access, errors
from skills_app.console.base import Console, console_view
from skills_app.console.forms import SecretForm, WorkspaceSettingsForm, add_service_error
from skills_app.selectors.secrets import secret_list
from skills_app.services import workspace_settings as service

# Secrets are few per workspace; the page lists them all.
SECRETS_SHOWN = 500


def _saved(form: forms.Form, call: Callable[[dict[str, Any]], object]) -> bool:
    """Run ``call`` with the form's data if it is valid; a service's refusal lands on the form."""
    if not form.is_valid():
        return False
    try:
        call(form.cleaned_data)
    except errors.ValidationFailed as exc:
        add_service_error(form, exc)
        return False
    return True


@console_view(skills=False)
def settings(request: HttpRequest, console: Console) -> HttpResponse:
    """Owners and admins only; members get 403 (and strangers 404 from ``console_view``)."""
    actor, ws = console.actor, console.ws
    access.require_workspace_admin(actor, ws)
    team = not ws.is_personal
    settings_form = WorkspaceSettingsForm(
        initial={field: getattr(ws, field) for field in service.WORKSPACE_SETTINGS}, team=team
    )
    secret_form = SecretForm()
    kind = request.POST.get("form") if request.method == "POST" else None
    if kind == "delete_secret":
        name = request.POST.get("secret_name", "")
        service.workspace_secret_delete(actor=actor, workspace=ws, name=name)
        messages.success(request, f"Secret {name} deleted.")
        return console.redirect("settings")
    if kind == "settings":
        settings_form = WorkspaceSettingsForm(request.POST, team=team)
        if _saved(
            settings_form,
            lambda data: service.workspace_settings_update(actor=actor, workspace=ws, **data),
        ):
            messages.success(request, "Settings saved.")
            return console.redirect("settings")
    elif kind is not None:
        secret_form = SecretForm(request.POST)
        if _saved(
            secret_form,
            lambda data: service.workspace_secret_set(
                actor=actor, workspace=ws, name=data["secret_name"], value=data["value"]
            ),
        ):
            messages.success(request, f"Secret {secret_form.cleaned_data['secret_name']} saved.")
            return console.redirect("settings")
    response = console.render(
        "console/admin/settings.html",
        {
            "settings_form": settings_form,
            "secret_form": secret_form,
            "secrets": secret_list(actor=actor, workspace=ws, limit=SECRETS_SHOWN).results,
        },
        status=400 if settings_form.errors or secret_form.errors else 200,
    )
    response["Cache-Control"] = "no-store"
    return response
