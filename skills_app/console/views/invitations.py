"""Invitations (the members page's invite/revoke/resend, and the public link the invitee
opens), open sign-up. The rules live in ``services.invitations``."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse

from skills_app import errors
from skills_app.access import invitation_for
from skills_app.console.base import (
    Console,
    client_ip,
    console_view,
    error_page,
    with_security_headers,
)
from skills_app.console.forms import (
    InvitedSignupForm,
    InviteForm,
    MemberAddForm,
    SignupForm,
    add_service_error,
)
from skills_app.console.views.admin import _members_page
from skills_app.selectors.invitations import invitation_by_link
from skills_app.services import invitations

# The account a sign-up or an invitation creates signs in with the model backend explicitly:
# with several AUTHENTICATION_BACKENDS (e.g. a lockout backend) ``login`` must be told which.
MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


def _origin(request: HttpRequest) -> str:
    return request.build_absolute_uri("/")


@console_view(skills=False, post_only=True)
def invite(request: HttpRequest, console: Console) -> HttpResponse:
    form = InviteForm(request.POST)
    if form.is_valid():
        try:
            invitation = invitations.invitation_create(
                actor=console.actor,
                workspace=console.ws,
                email=form.cleaned_data["email"],
                role=form.cleaned_data["role"],
                public_url=_origin(request),
            )
        except errors.NotFound:
            raise
        except errors.XmemoError as exc:
            add_service_error(form, exc)
            return _members_page(console, MemberAddForm(), invite_form=form, status=exc.status)
        messages.success(request, f"Invitation sent to {invitation.email}.")
        return console.redirect("members")
    return _members_page(console, MemberAddForm(), invite_form=form, status=400)


@console_view(skills=False, post_only=True)
def invitation_change(request: HttpRequest, console: Console, invitation_id: str) -> HttpResponse:
    """Revoke (``revoke`` posted) or resend (``resend`` posted) a pending invitation."""
    invitation = invitation_for(
        actor=console.actor, workspace=console.ws, invitation_id=invitation_id
    )
    try:
        if "revoke" in request.POST:
            invitations.invitation_revoke(actor=console.actor, invitation=invitation)
            messages.success(request, f"Invitation for {invitation.email} revoked.")
        else:
            invitations.invitation_resend(
                actor=console.actor, invitation=invitation, public_url=_origin(request)
            )
            messages.success(request, f"Invitation sent again to {invitation.email}.")
    except errors.XmemoError as exc:
        messages.error(request, exc.message)
    return console.redirect("members")


def _signed_in(request: HttpRequest, user: User) -> None:
    login(request, user, backend=MODEL_BACKEND)


def invitation(request: HttpRequest, token: str) -> HttpResponse:
    """The link of an invitation e-mail: accept as the signed-in user, or create the account."""
    try:
        found = invitation_by_link(token=token)
    except errors.XmemoError as exc:
        return error_page(
            request, status=exc.status, title="This invitation cannot be used", message=exc.message
        )
    signed_in = request.user.is_authenticated
    form = InvitedSignupForm(None if signed_in else (request.POST or None))
    status = 200
    if request.method == "POST":
        try:
            if signed_in:
                invitations.invitation_accept(
                    token=token,
                    user=request.user,  # type: ignore[arg-type]
                    ip=client_ip(request),
                )
            elif form.is_valid():
                user = invitations.invitation_accept_with_signup(
                    token=token,
                    username=form.cleaned_data["username"],
                    password=form.cleaned_data["password"],
                    ip=client_ip(request),
                )
                _signed_in(request, user)
            else:
                raise errors.ValidationFailed("Check the highlighted fields.")
        except errors.XmemoError as exc:
            if not signed_in:
                add_service_error(form, exc)
            else:
                messages.error(request, exc.message)
            status = exc.status
        else:
            messages.success(request, f"Welcome to {found.workspace.name}.")
            return HttpResponseRedirect(reverse("console:skill_list", args=[found.workspace.slug]))
    email_matches = signed_in and (
        (request.user.email or "").lower() == found.email.lower()  # type: ignore[union-attr]
    )
    response = render(
        request,
        "console/invitation.html",
        {
            "invitation": found,
            "form": form,
            "signed_in": signed_in,
            "email_matches": email_matches,
            "login_url": f"{reverse('console:login')}?next={request.path}",
        },
        status=status,
    )
    response["Cache-Control"] = "no-store"
    return with_security_headers(response)


def signup(request: HttpRequest) -> HttpResponse:
    """Open sign-up: a new account and its personal workspace (XMEMO_OPEN_SIGNUP)."""
    if not settings.XMEMO_OPEN_SIGNUP:
        return error_page(
            request,
            status=404,
            title="Sign-up is closed",
            message="Accounts here are made by invitation: ask a team owner or admin.",
        )
    if request.user.is_authenticated:
        return HttpResponseRedirect(reverse("console:home"))
    form = SignupForm(request.POST or None)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                user = invitations.user_signup(
                    username=form.cleaned_data["username"],
                    email=form.cleaned_data["email"],
                    password=form.cleaned_data["password"],
                    ip=client_ip(request),
                )
            except errors.XmemoError as exc:
                add_service_error(form, exc)
                status = exc.status
            else:
                _signed_in(request, user)
                return HttpResponseRedirect(reverse("console:home"))
    return with_security_headers(
        render(request, "console/signup.html", {"form": form}, status=status)
    )
