"""Who is told what about a review, by e-mail (docs/contract.md §16): the one place that decides.

A proposal goes to the team's reviewers (owners and admins) but not its proposer; an approval,
rejection, request for changes or comment goes to the author, unless the author did it. Each
user can switch each kind off (``NotificationPreference``; no row: everything on). Recipients
are chosen in the caller's transaction and mailed after commit, so a rolled-back action tells
nobody and a mail server that is down is logged, never failing the action."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage, get_connection
from django.db import transaction
from django.urls import reverse

from skills_app import errors
from skills_app.access import ADMIN_ROLES, Actor, require_unrestricted
from skills_app.domain.text import one_line
from skills_app.models import NotificationPreference, RevisionComment, SkillRevision
from skills_app.services.accounts import personal_workspace_ensure
from skills_app.services.audit import audit_record

if TYPE_CHECKING:
    from django.contrib.auth.models import User

logger = logging.getLogger(__name__)
# Where links point when XMEMO_PUBLIC_URL is not set: the embedded default (`make run`).
EMBEDDED_ORIGIN = "http://127.0.0.1:8000"

# Notification kind → the preference field that switches it off.
PREFERENCES = ("review_requests", "review_outcomes", "comments")
_PREFERENCE_OF = {
    "proposed": "review_requests",
    "approved": "review_outcomes",
    "published": "review_outcomes",
    "rejected": "review_outcomes",
    "changes_requested": "review_outcomes",
    "commented": "comments",
}
_SUBJECTS = {
    "proposed": "Review requested: {name} (revision #{number})",
    "approved": "Approved ({approvals} of {required}): {name} (revision #{number})",
    "published": "Approved and published: {name} (revision #{number})",
    "rejected": "Rejected: {name} (revision #{number})",
    "changes_requested": "Changes requested: {name} (revision #{number})",
    "commented": "New comment: {name} (revision #{number})",
}


@dataclass(frozen=True)
class _Mail:
    to: str
    subject: str
    body: str


def _wanted(users: list[User], kind: str) -> list[User]:
    field = _PREFERENCE_OF[kind]
    off = set(
        NotificationPreference.objects.filter(
            user__in=[u.pk for u in users],
            **{field: False},
        ).values_list("user_id", flat=True)
    )
    return [u for u in users if u.pk not in off and u.email]


def _recipients(kind: str, revision: SkillRevision, actor: Actor) -> list[User]:
    user_model = get_user_model()
    if kind == "proposed":
        users = list(
            user_model.objects.filter(
                memberships__workspace_id=revision.workspace_id,
                memberships__role__in=ADMIN_ROLES,
                is_active=True,
            ).order_by("pk")
        )
    elif revision.author is not None and revision.author.is_active:
        users = [revision.author]
    else:
        users = []
    acting = actor.user.pk if actor.user is not None else None
    return _wanted([u for u in users if u.pk != acting], kind)


def review_notify(
    *,
    kind: str,
    actor: Actor,
    revision: SkillRevision,
    comment: RevisionComment | None = None,
    text: str = "",
    approvals: int = 0,
) -> None:
    """Tell whoever ``kind`` concerns about ``revision``, once the caller's transaction commits.

    ``kind`` is one of proposed, approved, published, rejected, changes_requested, commented.
    """
    recipients = _recipients(kind, revision, actor)
    if not recipients:
        return
    workspace = revision.workspace
    link = (settings.XMEMO_PUBLIC_URL or EMBEDDED_ORIGIN) + reverse(
        "console:review", args=(workspace.slug, revision.revision_id)
    )
    subject = _SUBJECTS[kind].format(
        name=one_line(revision.name),
        number=revision.revision_number,
        approvals=approvals,
        required=workspace.required_approvals,
    )
    said = comment.body if comment is not None else text
    body = "\n".join(
        line
        for line in (
            f"{actor.label} — {subject}",
            f"Workspace: {workspace.name} ({workspace.slug})",
            f"On line {comment.line}:" if comment is not None and comment.line else "",
            f"\n{said}\n" if said else "",
            f"Open the review: {link}",
            "\nYou can switch these e-mails off on the Notifications page of the console.",
        )
        if line
    )
    mails = [_Mail(to=user.email, subject=subject, body=body) for user in recipients]
    transaction.on_commit(lambda: _send(mails))


# Lifecycle action → notification kind (the actions nobody is told about are left out).
_ACTION_KINDS = {
    "save": "proposed",  # a save that lands as proposed (intent publish in a team)
    "propose": "proposed",
    "reject": "rejected",
    "request_changes": "changes_requested",
}


def lifecycle_notify(
    *, actor: Actor, revision: SkillRevision, action: str, comment: str = "", approvals: int = 0
) -> None:
    """The notification of one lifecycle step (called from ``services.skills``)."""
    if action == "approve":
        kind = "published" if revision.state == SkillRevision.State.PUBLISHED else "approved"
    elif action == "save" and revision.state != SkillRevision.State.PROPOSED:
        return
    elif action in _ACTION_KINDS:
        kind = _ACTION_KINDS[action]
    else:
        return
    review_notify(kind=kind, actor=actor, revision=revision, text=comment, approvals=approvals)


def _send(mails: list[_Mail]) -> None:
    """Send after commit; a failure is logged, never raised (the action already happened)."""
    try:
        with get_connection(fail_silently=False) as connection:
            connection.send_messages(
                [
                    EmailMessage(m.subject, m.body, settings.DEFAULT_FROM_EMAIL, [m.to])
                    for m in mails
                ]
            )
    except Exception:
        logger.exception("Review notification e-mail could not be sent (%d mails)", len(mails))


# --- preferences ------------------------------------------------------------------------------


def notification_preferences_as_dict(preference: NotificationPreference) -> dict[str, bool]:
    return {field: bool(getattr(preference, field)) for field in PREFERENCES}


def notification_preferences(*, actor: Actor) -> NotificationPreference:
    """The caller's preferences (defaults when never changed; nothing stored by reading)."""
    if actor.user is None:
        raise errors.PermissionDenied("Only a user has notification preferences.")
    found = NotificationPreference.objects.filter(user=actor.user).first()
    return found or NotificationPreference(user=actor.user)


@transaction.atomic
def notification_preferences_update(
    *, actor: Actor, changes: dict[str, object]
) -> NotificationPreference:
    """Switch kinds of review e-mail on or off for the caller; audited in their personal
    workspace (a preference is the user's, not a team's)."""
    if actor.user is None:
        raise errors.PermissionDenied("Only a user has notification preferences.")
    require_unrestricted(actor, "change its user's notification preferences")
    unknown = sorted(set(changes) - set(PREFERENCES))
    if unknown:
        raise errors.ValidationFailed(
            f"Unknown preference {unknown[0]!r}; use {', '.join(PREFERENCES)}.",
            details={"field": unknown[0]},
        )
    for field, value in changes.items():
        if not isinstance(value, bool):
            raise errors.ValidationFailed(
                f"{field} must be true or false.", details={"field": field}
            )
    preference, _ = NotificationPreference.objects.select_for_update().get_or_create(
        user=actor.user
    )
    changed = {
        field: value for field, value in changes.items() if getattr(preference, field) != value
    }
    if changed:
        for field, value in changed.items():
            setattr(preference, field, value)
        preference.save(update_fields=list(changed))
        audit_record(
            actor=actor,
            workspace=personal_workspace_ensure(user=actor.user),
            action="account.notifications.change",
            target_type="user",
            target_id=actor.user.get_username(),
            data=changed,
        )
    return preference
