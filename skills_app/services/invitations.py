"""Invitations into a team, and sign-up (docs/contract.md §16).

An invitation is a single-use link with an expiry, mailed to one address. Accepting it either
joins the signed-in account (whose e-mail must be the invited address: the link proves control
of the mailbox, the session proves control of the account, and only both together may join) or
creates a new account for that address. An address that already has an account never gets a
second one: it signs in and accepts.
"""

from __future__ import annotations

import logging
import secrets
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.base_user import BaseUserManager
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from skills_app import errors
from skills_app.access import Actor
from skills_app.domain.text import one_line
from skills_app.domain.tokens import token_hash
from skills_app.models import Invitation, Membership, Workspace
from skills_app.selectors.invitations import invitation_by_link, pending_invitations
from skills_app.services.accounts import _check_role_value, _team_admin, user_create
from skills_app.services.audit import audit_record

logger = logging.getLogger(__name__)
MIN_PASSWORD_LENGTH = 8


def _clean_email(email: str) -> str:
    email = BaseUserManager.normalize_email(email.strip())
    try:
        validate_email(email)
    except ValidationError as exc:
        raise errors.ValidationFailed(
            "Enter a valid e-mail address.", details={"field": "email"}
        ) from exc
    return email


def _users_with_email(email: str) -> list[User]:
    return list(get_user_model().objects.filter(email__iexact=email))


def _check_password(password: str, *, username: str, email: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise errors.ValidationFailed(
            f"A password needs at least {MIN_PASSWORD_LENGTH} characters.",
            details={"field": "password"},
        )
    try:
        password_validation.validate_password(
            password, get_user_model()(username=username, email=email)
        )
    except ValidationError as exc:
        raise errors.ValidationFailed(
            " ".join(exc.messages), details={"field": "password"}
        ) from exc


def _new_account(*, username: str, email: str, password: str) -> User:
    """A new user with their personal workspace; never touches an existing account."""
    username = username.strip()
    if get_user_model().objects.filter(username=username).exists():
        raise errors.Conflict(
            f"The username '{username}' is taken; choose another.", details={"field": "username"}
        )
    if _users_with_email(email):
        raise errors.Conflict(
            "An account with this e-mail address exists already: sign in instead.",
            details={"field": "email"},
        )
    _check_password(password, username=username, email=email)
    try:
        return user_create(username=username, email=email, password=password)
    except errors.ValidationFailed as exc:
        exc.details.setdefault("field", "username")
        raise


def _link(public_url: str, token: str) -> str:
    base = settings.XMEMO_PUBLIC_URL or public_url.rstrip("/")
    return base + reverse("console:invitation", args=[token])


def _mail_invitation(invitation: Invitation, link: str) -> None:
    """Send after commit, so no mail announces an invitation that was rolled back. A failing mail
    server does not undo the invitation: the admin sees it pending and can resend it."""
    context = {"invitation": invitation, "link": link, "workspace": invitation.workspace}
    subject = one_line(f"You are invited to {invitation.workspace.name} on XMemo")
    body = render_to_string("console/email/invitation.txt", context)

    def send() -> None:
        try:
            send_mail(subject, body, None, [invitation.email])
        except Exception:  # any transport failure: logged; a resend recovers
            logger.exception("Could not send invitation %s", invitation.invitation_id)

    transaction.on_commit(send)


def _issue(invitation: Invitation) -> str:
    token = secrets.token_urlsafe(32)
    invitation.token_hash = token_hash(token)
    invitation.expires_at = timezone.now() + timedelta(days=settings.XMEMO_INVITATION_DAYS)
    return token


def _audit(actor: Actor, invitation: Invitation, verb: str, **data: Any) -> None:
    audit_record(
        actor=actor,
        workspace=invitation.workspace,
        action=f"workspace.invitation.{verb}",
        target_type="invitation",
        target_id=invitation.invitation_id,
        data={"email": invitation.email, **data},
    )


@transaction.atomic
def invitation_create(
    *, actor: Actor, workspace: Workspace, email: str, role: str, public_url: str
) -> Invitation:
    """Invite ``email`` into the team with ``role`` and mail the link (``public_url`` is the
    console's origin, used when XMEMO_PUBLIC_URL is not set)."""
    my_role = _team_admin(actor, workspace)
    _check_role_value(role)
    if role == "owner" and my_role != "owner":
        raise errors.PermissionDenied("Only an owner can invite another owner.")
    email = _clean_email(email)
    if Membership.objects.filter(workspace=workspace, user__email__iexact=email).exists():
        raise errors.Conflict(
            f"{email} is already a member of this team.", details={"field": "email"}
        )
    if pending_invitations(workspace).filter(email__iexact=email).exists():
        raise errors.Conflict(
            f"{email} has a pending invitation already; resend or revoke it.",
            details={"field": "email"},
        )
    invitation = Invitation(workspace=workspace, email=email, role=role, invited_by=actor.user)
    token = _issue(invitation)
    invitation.save()
    _audit(actor, invitation, "create", role=role)
    _mail_invitation(invitation, _link(public_url, token))
    return invitation


def _pending_for_update(invitation: Invitation) -> Invitation:
    locked = pending_invitations(invitation.workspace).select_for_update(of=("self",))
    found = locked.filter(pk=invitation.pk).first()
    if found is None:
        raise errors.Conflict(
            "This invitation is no longer pending.", details={"id": invitation.invitation_id}
        )
    return found


@transaction.atomic
def invitation_resend(*, actor: Actor, invitation: Invitation, public_url: str) -> Invitation:
    """Mail a fresh link with a fresh expiry; the previous link stops working."""
    _team_admin(actor, invitation.workspace)
    invitation = _pending_for_update(invitation)
    token = _issue(invitation)
    invitation.save(update_fields=["token_hash", "expires_at"])
    _audit(actor, invitation, "resend")
    _mail_invitation(invitation, _link(public_url, token))
    return invitation


@transaction.atomic
def invitation_revoke(*, actor: Actor, invitation: Invitation) -> None:
    _team_admin(actor, invitation.workspace)
    invitation = _pending_for_update(invitation)
    invitation.revoked_at = timezone.now()
    invitation.save(update_fields=["revoked_at"])
    _audit(actor, invitation, "revoke")


def _join(invitation: Invitation, user: User, *, ip: str | None) -> Membership:
    membership, created = Membership.objects.get_or_create(
        workspace=invitation.workspace, user=user, defaults={"role": invitation.role}
    )
    invitation.accepted_at = timezone.now()
    invitation.accepted_by = user
    invitation.save(update_fields=["accepted_at", "accepted_by"])
    # An existing member keeps their role: accepting never demotes or promotes.
    _audit(
        Actor(user=user, via="console", ip=ip),
        invitation,
        "accept",
        role=membership.role,
        joined=created,
    )
    return membership


@transaction.atomic
def invitation_accept(*, token: str, user: User, ip: str | None = None) -> Membership:
    """The signed-in ``user`` accepts; their e-mail must be the invited address."""
    invitation = invitation_by_link(token=token, for_update=True)
    if (user.email or "").lower() != invitation.email.lower():
        raise errors.PermissionDenied(
            f"This invitation was sent to {invitation.email}, and you are signed in as "
            f"{user.get_username()}. Sign out, then sign in as (or create) the invited account.",
            details={"reason": "email_mismatch"},
        )
    return _join(invitation, user, ip=ip)


@transaction.atomic
def invitation_accept_with_signup(
    *, token: str, username: str, password: str, ip: str | None = None
) -> User:
    """Create the invited address's account (with its personal workspace) and join the team,
    all or nothing."""
    invitation = invitation_by_link(token=token, for_update=True)
    user = _new_account(username=username, email=invitation.email, password=password)
    _join(invitation, user, ip=ip)
    return user


@transaction.atomic
def user_signup(*, username: str, email: str, password: str, ip: str | None = None) -> User:
    """Open sign-up (only where XMEMO_OPEN_SIGNUP is on)."""
    if not settings.XMEMO_OPEN_SIGNUP:
        raise errors.PermissionDenied(
            "Sign-up is closed here: ask a team owner or admin for an invitation."
        )
    user = _new_account(username=username, email=_clean_email(email), password=password)
    audit_record(
        actor=Actor(user=user, via="console", ip=ip),
        workspace=Workspace.objects.get(slug=user.get_username()),
        action="account.signup",
        target_type="user",
        target_id=user.get_username(),
    )
    return user
