"""Signing in and out, and the front door that picks a workspace."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.http.response import HttpResponseBase
from django.urls import reverse, reverse_lazy

from skills_app.console.base import SESSION_WORKSPACE_KEY, console_actor, with_security_headers
from skills_app.selectors.accounts import home_workspace


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """To the workspace used last, else the personal one, else the first readable one."""
    workspace = home_workspace(
        actor=console_actor(request), last_slug=request.session.get(SESSION_WORKSPACE_KEY)
    )
    if workspace is None:
        return HttpResponseRedirect(reverse("console:workspace_new"))
    return HttpResponseRedirect(reverse("console:skill_list", args=[workspace.slug]))


class SecurityHeadersMixin:
    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        return with_security_headers(super().dispatch(request, *args, **kwargs))  # type: ignore[misc]


class LoginView(SecurityHeadersMixin, auth_views.LoginView):
    template_name = "console/login.html"
    redirect_authenticated_user = True

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**super().get_context_data(**kwargs), "open_signup": settings.XMEMO_OPEN_SIGNUP}


# Password reset by e-mail: Django's own views and forms, in the console's look.
class PasswordResetView(SecurityHeadersMixin, auth_views.PasswordResetView):
    template_name = "console/password_reset.html"
    email_template_name = "console/email/password_reset.txt"
    subject_template_name = "console/email/password_reset_subject.txt"
    success_url = reverse_lazy("console:password_reset_done")


class PasswordResetDoneView(SecurityHeadersMixin, auth_views.PasswordResetDoneView):
    template_name = "console/password_reset.html"


class PasswordResetConfirmView(SecurityHeadersMixin, auth_views.PasswordResetConfirmView):
    template_name = "console/password_reset.html"
    success_url = reverse_lazy("console:password_reset_complete")


class PasswordResetCompleteView(SecurityHeadersMixin, auth_views.PasswordResetCompleteView):
    template_name = "console/password_reset.html"


class LogoutView(auth_views.LogoutView):
    """POST only (Django's default): a link cannot sign anybody out."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return with_security_headers(super().dispatch(request, *args, **kwargs))
