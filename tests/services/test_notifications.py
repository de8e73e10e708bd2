"""Review e-mails (docs/contract.md §16): who is told, after commit only, per-user opt-out, and a
mail server that is down never fails the action."""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import pytest
from django.core import mail

from skills_app import errors
from skills_app.models import AuditEntry, NotificationPreference, SkillRevision, Workspace
from skills_app.services.notifications import notification_preferences_update
from skills_app.services.reviews import revision_comment_add
from skills_app.services.skills import revision_transition
from tests.factories import Env, actor_for, make_invitation, save

Capture = Callable[..., AbstractContextManager[list[Callable[[], None]]]]


@pytest.fixture
def mailed_env(env: Env) -> Env:
    for user in (env.owner, env.admin, env.member, env.member2):
        user.email = f"{user.username}@example.test"
        user.save(update_fields=["email"])
    return env


def _to() -> list[str]:
    return sorted(address for message in mail.outbox for address in message.to)


def _proposal(env: Env, capture: Capture) -> SkillRevision:
    with capture(execute=True):
        return save(env.member, env.team, intent="publish", instruction_body="a\nb\n").revision


def test_a_proposal_tells_the_reviewers_after_commit(
    mailed_env: Env, django_capture_on_commit_callbacks: Capture
) -> None:
    env = mailed_env
    with django_capture_on_commit_callbacks() as callbacks:
        rev = save(env.member, env.team, intent="publish").revision
    assert mail.outbox == []  # nothing before the transaction commits
    for callback in callbacks:
        callback()
    assert _to() == sorted([env.owner.email, env.admin.email])
    assert "Review requested" in mail.outbox[0].subject
    assert f"/w/{env.team.slug}/revisions/{rev.revision_id}/review/" in mail.outbox[0].body


def test_the_author_hears_of_comments_changes_and_approval_but_not_of_their_own_acts(
    mailed_env: Env, django_capture_on_commit_callbacks: Capture
) -> None:
    env = mailed_env
    rev = _proposal(env, django_capture_on_commit_callbacks)
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        revision_comment_add(actor=actor_for(env.admin), revision=rev, body="Why *b*?", line=2)
        revision_comment_add(actor=actor_for(env.member), revision=rev, body="Because.")
    assert _to() == [env.member.email]
    assert "On line 2" in mail.outbox[0].body
    assert "Why *b*?" in mail.outbox[0].body
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        revision_transition(
            actor=actor_for(env.owner), revision=rev, action="request_changes", comment="More."
        )
    assert [m.subject.split(":")[0] for m in mail.outbox] == ["Changes requested"]
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        revision_transition(actor=actor_for(env.member), revision=rev, action="propose")
        revision_transition(actor=actor_for(env.owner), revision=rev, action="approve")
    subjects = sorted((m.to[0], m.subject.split(":")[0]) for m in mail.outbox)
    assert subjects == sorted(
        [
            (env.owner.email, "Review requested"),
            (env.admin.email, "Review requested"),
            (env.member.email, "Approved and published"),
        ]
    )


def test_a_refused_action_tells_nobody_and_opted_out_users_are_left_out(
    mailed_env: Env, django_capture_on_commit_callbacks: Capture
) -> None:
    env = mailed_env
    notification_preferences_update(actor=actor_for(env.admin), changes={"review_requests": False})
    assert AuditEntry.objects.filter(action="account.notifications.change").exists()
    rev = _proposal(env, django_capture_on_commit_callbacks)
    assert _to() == [env.owner.email]
    mail.outbox.clear()
    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(errors.ValidationFailed),
    ):
        revision_transition(actor=actor_for(env.owner), revision=rev, action="request_changes")
    assert mail.outbox == []
    with pytest.raises(errors.ValidationFailed):
        notification_preferences_update(actor=actor_for(env.admin), changes={"comments": "no"})
    assert NotificationPreference.objects.get(user=env.admin).comments is True


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_mail_server_that_is_down_is_logged_and_the_action_stands(
    mailed_env: Env,
    django_capture_on_commit_callbacks: Capture,
    settings: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = (
        "127.0.0.1",
        _closed_port(),
        2,
    )
    with caplog.at_level(logging.ERROR, logger="skills_app.services.notifications"):
        rev = _proposal(mailed_env, django_capture_on_commit_callbacks)
    assert SkillRevision.objects.get(pk=rev.pk).state == "proposed"
    assert "could not be sent" in caplog.text


def test_a_name_stored_before_the_one_line_rule_still_gets_its_mails_out(
    mailed_env: Env, django_capture_on_commit_callbacks: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Names with CR/LF are refused now (docs/contract.md §16b), but a revision is immutable, so
    one saved before the rule keeps its name; Django refuses such a subject (BadHeaderError)
    and the mail was lost. The subject is made one line instead."""
    env = mailed_env
    monkeypatch.setattr("skills_app.services.skills.bundle_checks", lambda bundle: iter(()))
    with django_capture_on_commit_callbacks(execute=True):
        save(env.member, env.team, intent="publish", name="Deploy\r\nBcc: all@example.test")
    assert _to() == sorted([env.owner.email, env.admin.email])
    assert mail.outbox[0].subject == "Review requested: Deploy Bcc: all@example.test (revision #1)"
    assert mail.outbox[0].message()["Bcc"] is None


def test_an_invitation_to_a_workspace_named_before_the_rule_is_still_sent(
    env: Env, django_capture_on_commit_callbacks: Capture
) -> None:
    Workspace.objects.filter(pk=env.team.pk).update(name="Ops\nBcc: all@example.test")
    env.team.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        make_invitation(env.owner, env.team, email="guest@example.test")
    assert [m.to for m in mail.outbox] == [["guest@example.test"]]
    assert mail.outbox[0].subject == "You are invited to Ops Bcc: all@example.test on XMemo"
