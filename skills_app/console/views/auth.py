"""Signing in and out, and the front door that picks a workspace."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.http.response import HttpResponseBase
from django.urls import reverse

from ... import access
from ..base import SESSION_WORKSPACE_KEY, console_actor, with_security_headers


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """To the workspace used last, else the personal one, else the first readable one."""
    workspaces = access.readable_workspaces(console_actor(request), include_disabled=True)
    last = request.session.get(SESSION_WORKSPACE_KEY)
    workspace = (
        (workspaces.filter(slug=last).first() if last else None)
        or workspaces.filter(kind="personal").first()
        or workspaces.first()
    )
    if workspace is None:
        return HttpResponseRedirect(reverse("console:workspace_new"))
    return HttpResponseRedirect(reverse("console:skill_list", args=[workspace.slug]))


class LoginView(auth_views.LoginView):
    template_name = "console/login.html"
    redirect_authenticated_user = True

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        return with_security_headers(super().dispatch(request, *args, **kwargs))


class LogoutView(auth_views.LogoutView):
    """POST only (Django's default): a link cannot sign anybody out."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return with_security_headers(super().dispatch(request, *args, **kwargs))
