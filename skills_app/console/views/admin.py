"""Administration: teams, members and roles, API tokens, the audit log."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone

from skills_app import errors
from skills_app.access import token_for
from skills_app.console.base import Console, console_view, page_query
from skills_app.console.forms import (
    AuditFilterForm,
    InviteForm,
    MemberAddForm,
    MemberRoleForm,
    TokenForm,
    WorkspaceForm,
    add_service_error,
)
from skills_app.models import AuditEntry
from skills_app.selectors.accounts import audit_entries
from skills_app.selectors.pages.workspace import members_page, tokens_page
from skills_app.services import accounts

AUDIT_PAGE_SIZE = 50


@console_view(workspace=False)
def workspace_new(request: HttpRequest, console: Console) -> HttpResponse:
    form = WorkspaceForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            workspace = accounts.workspace_create(
                actor=console.actor,
                slug=form.cleaned_data["slug"].strip(),
                name=form.cleaned_data["name"],
            )
        except errors.XmemoError as exc:
            add_service_error(form, exc)
        else:
            messages.success(request, f"Team '{workspace.name}' created; you are its owner.")
            return HttpResponseRedirect(reverse("console:skill_list", args=[workspace.slug]))
    return console.render("console/admin/workspace_new.html", {"form": form})


def _members_page(
    console: Console,
    form: MemberAddForm,
    status: int = 200,
    *,
    invite_form: InviteForm | None = None,
) -> HttpResponse:
    page = members_page(actor=console.actor, workspace=console.ws)
    return console.render(
        "console/admin/members.html",
        {
            "members": page.members,
            "invitations": page.invitations,
            "form": form,
            "role_form": MemberRoleForm(),
            "invite_form": invite_form or InviteForm(),
        },
        status=status,
    )


@console_view(skills=False)
def members(request: HttpRequest, console: Console) -> HttpResponse:
    form = MemberAddForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            accounts.membership_add(actor=console.actor, workspace=console.ws, **form.cleaned_data)
        except errors.XmemoError as exc:
            add_service_error(form, exc)
            return _members_page(console, form, status=exc.status)
        messages.success(request, f"{form.cleaned_data['username']} added.")
        return console.redirect("members")
    return _members_page(console, form, status=400 if form.errors else 200)


@console_view(skills=False, post_only=True)
def member_change(request: HttpRequest, console: Console, username: str) -> HttpResponse:
    """Change a member's role (``role`` posted) or remove them (``remove`` posted)."""
    try:
        if "remove" in request.POST:
            accounts.membership_remove(actor=console.actor, workspace=console.ws, username=username)
            messages.success(request, f"{username} removed.")
        else:
            form = MemberRoleForm(request.POST)
            if not form.is_valid():
                raise errors.ValidationFailed("Choose a valid role.")
            accounts.membership_change(
                actor=console.actor,
                workspace=console.ws,
                username=username,
                role=form.cleaned_data["role"],
            )
            messages.success(request, f"{username} is now {form.cleaned_data['role']}.")
    except errors.NotFound:
        raise
    except errors.XmemoError as exc:
        messages.error(request, exc.message)
    return console.redirect("members")


@console_view(skills=False)
def tokens(request: HttpRequest, console: Console) -> HttpResponse:
    """The user's own tokens. A new token's secret is shown on this response only."""
    form = TokenForm(request.POST or None)
    secret = ""
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            data = form.cleaned_data
            days = data["expires_in_days"]
            try:
                token, secret = accounts.token_create(
                    actor=console.actor,
                    user=request.user,  # type: ignore[arg-type]
                    name=data["name"],
                    scopes=data["scopes"],
                    workspace=console.ws if data["restrict"] or data["owner"] else None,
                    profile=data["profile"],
                    expires_at=timezone.now() + timedelta(days=days) if days else None,
                    role=data["owner"],
                    permission_mode=data["permission_mode"],
                )
            except errors.XmemoError as exc:
                add_service_error(form, exc)
                status = exc.status
            else:
                status = 201
                form = TokenForm()
                messages.success(request, f"Token '{token.name}' created. Copy it now.")
    page = tokens_page(actor=console.actor, workspace=console.ws)
    response = console.render(
        "console/admin/tokens.html",
        {
            "form": form,
            "secret": secret,
            "tokens": page.tokens,
            "workspace_tokens": page.workspace_tokens,
            "now": timezone.now(),
        },
        status=status,
    )
    response["Cache-Control"] = "no-store"
    return response


@console_view(skills=False, post_only=True)
def token_revoke(request: HttpRequest, console: Console, token_id: str) -> HttpResponse:
    token = token_for(console.actor, token_id)
    accounts.token_revoke(actor=console.actor, token=token)
    messages.success(request, f"Token '{token.name}' revoked: it no longer works.")
    return console.redirect("tokens")


@console_view(skills=False)
def audit(request: HttpRequest, console: Console) -> HttpResponse:
    form = AuditFilterForm(request.GET or None)
    status = 200
    entries: QuerySet[AuditEntry] | list[AuditEntry]
    try:
        entries = audit_entries(actor=console.actor, workspace=console.ws, filters=form.filters())
    except errors.ValidationFailed as exc:
        add_service_error(form, exc)
        entries, status = [], exc.status
    page = Paginator(entries, AUDIT_PAGE_SIZE).get_page(request.GET.get("page"))
    return console.render(
        "console/admin/audit.html",
        {"form": form, "page": page, "page_query": page_query(request)},
        status=status,
    )
