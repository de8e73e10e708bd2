"""Invitations, sign-up and password reset in the console (Django's test client)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from skills_app.models import AuditEntry, Invitation, Membership, Workspace
from tests.factories import Env, make_user
from tests.mail import last_invite_path, mail_on_commit  # noqa: F401 (fixture)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("mail_on_commit")]
PASSWORD = "correct horse battery"


def _invite(client: Client, env: Env, email: str, role: str = "member") -> Any:
    return client.post(
        reverse("console:invite", args=[env.team.slug]), {"email": email, "role": role}
    )


def _signup_via(path: str, username: str, password: str = PASSWORD) -> tuple[Client, Any]:
    client = Client()
    response = client.post(
        path, {"username": username, "password": password, "password2": password}
    )
    return client, response


def test_admin_invites_lists_resends_and_revokes_on_the_members_page(
    env: Env, owner_client: Client
) -> None:
    members = reverse("console:members", args=[env.team.slug])
    response = _invite(owner_client, env, "pat@example.com", "admin")
    assert response.status_code == 302
    first_link = last_invite_path()
    page = owner_client.get(members).content.decode()
    assert "pat@example.com" in page
    assert 'data-testid="invitations"' in page
    invitation = Invitation.objects.get(email="pat@example.com")
    change = reverse("console:invitation_change", args=[env.team.slug, invitation.invitation_id])

    assert owner_client.post(change, {"resend": "1"}).status_code == 302
    second_link = last_invite_path()
    assert len(mail.outbox) == 2
    assert second_link != first_link
    assert Client().get(first_link).status_code == 404  # the old link no longer exists
    assert Client().get(second_link).status_code == 200

    assert owner_client.post(change, {"revoke": "1"}).status_code == 302
    gone = Client().get(second_link)
    assert gone.status_code == 410
    assert "withdrawn" in gone.content.decode()
    owner_client.get(members)  # shows (and so consumes) the flash messages
    assert "pat@example.com" not in owner_client.get(members).content.decode()
    assert list(
        AuditEntry.objects.filter(target_id=invitation.invitation_id)
        .order_by("id")
        .values_list("action", flat=True)
    ) == [
        "workspace.invitation.create",
        "workspace.invitation.resend",
        "workspace.invitation.revoke",
    ]


def test_invite_form_errors_stay_on_the_page_and_store_nothing(
    env: Env, owner_client: Client, member_client: Client
) -> None:
    bad = _invite(owner_client, env, "nope")
    assert bad.status_code == 400
    assert "valid e-mail" in bad.content.decode()
    assert _invite(owner_client, env, "x@example.com").status_code == 302
    duplicate = _invite(owner_client, env, "X@example.com")
    assert duplicate.status_code == 409
    assert "pending invitation" in duplicate.content.decode()
    assert _invite(member_client, env, "y@example.com").status_code == 403
    assert list(Invitation.objects.values_list("email", flat=True)) == ["x@example.com"]
    assert len(mail.outbox) == 1


def test_a_new_address_creates_its_account_and_lands_in_the_team(
    env: Env, owner_client: Client
) -> None:
    _invite(owner_client, env, "new@example.com", "admin")
    path = last_invite_path()
    page = Client().get(path)
    assert page.status_code == 200
    assert page["Cache-Control"] == "no-store"
    assert env.team.name in page.content.decode()

    client, response = _signup_via(path, "newbie")
    assert response.status_code == 302
    assert response["Location"] == reverse("console:skill_list", args=[env.team.slug])
    user = User.objects.get(username="newbie")
    assert user.email == "new@example.com"
    assert user.check_password(PASSWORD)
    assert Membership.objects.get(workspace=env.team, user=user).role == "admin"
    assert Workspace.objects.get(slug="newbie").kind == "personal"
    assert client.get(response["Location"]).status_code == 200  # signed in
    accepted = AuditEntry.objects.get(action="workspace.invitation.accept")
    assert (accepted.actor, accepted.workspace) == (user, env.team)

    # Single use: the same link again is refused and creates nobody.
    _, again = _signup_via(path, "newbie2")
    assert again.status_code == 410
    assert "already been used" in again.content.decode()
    assert not User.objects.filter(username="newbie2").exists()


def test_a_failed_signup_stores_nothing_and_keeps_the_invitation(
    env: Env, owner_client: Client
) -> None:
    _invite(owner_client, env, "late@example.com")
    path = last_invite_path()
    users = User.objects.count()
    taken = _signup_via(path, env.member.username)[1]
    assert taken.status_code == 409
    assert "is taken" in taken.content.decode()
    short = _signup_via(path, "fresh", "short")[1]
    assert short.status_code == 400
    assert "at least 8" in short.content.decode()
    bad_slug = _signup_via(path, "Not A Slug")[1]
    assert bad_slug.status_code == 400
    assert User.objects.count() == users
    assert not Workspace.objects.filter(slug="fresh").exists()
    assert Invitation.objects.get(email="late@example.com").accepted_at is None
    assert _signup_via(path, "fresh")[1].status_code == 302


def test_an_existing_account_signs_in_and_joins_without_a_second_user(
    env: Env, owner_client: Client
) -> None:
    known = make_user("known")
    known.email = "Known@Example.com"
    known.set_password(PASSWORD)
    known.save()
    _invite(owner_client, env, "known@example.com")
    path = last_invite_path()
    anonymous = Client().get(path).content.decode()
    assert f"{reverse('console:login')}?next={path}" in anonymous
    refused = _signup_via(path, "known-again")[1]
    assert refused.status_code == 409
    assert "sign in instead" in refused.content.decode()
    assert not User.objects.filter(username="known-again").exists()

    client = Client()
    login = client.post(
        f"{reverse('console:login')}?next={path}",
        {"username": "known", "password": PASSWORD, "next": path},
    )
    assert login["Location"] == path
    assert "Join as known" in client.get(path).content.decode()
    joined = client.post(path)
    assert joined["Location"] == reverse("console:skill_list", args=[env.team.slug])
    assert Membership.objects.get(workspace=env.team, user=known).role == "member"
    assert User.objects.filter(email__iexact="known@example.com").count() == 1


def test_a_different_signed_in_user_cannot_take_the_invitation(
    env: Env, owner_client: Client
) -> None:
    _invite(owner_client, env, "someone@example.com")
    path = last_invite_path()
    env.outsider.email = "outsider@example.com"
    env.outsider.save()
    client = Client()
    client.force_login(env.outsider)
    page = client.get(path).content.decode()
    assert "Join as" not in page
    assert "Sign out" in page
    response = client.post(path)
    assert response.status_code == 403
    assert "was sent to someone@example.com" in response.content.decode()
    assert not Membership.objects.filter(workspace=env.team, user=env.outsider).exists()
    assert Invitation.objects.get(email="someone@example.com").accepted_at is None
    assert not AuditEntry.objects.filter(action="workspace.invitation.accept").exists()


def test_expired_and_unknown_links_are_clear_errors(env: Env, owner_client: Client) -> None:
    _invite(owner_client, env, "slow@example.com")
    path = last_invite_path()
    Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    expired = Client().get(path)
    assert expired.status_code == 410
    assert "expired" in expired.content.decode()
    _, response = _signup_via(path, "slowpoke")
    assert response.status_code == 410
    assert not User.objects.filter(username="slowpoke").exists()
    unknown = Client().get(reverse("console:invitation", args=["not-a-token"]))
    assert unknown.status_code == 404
    assert "not valid" in unknown.content.decode()


def test_open_signup_follows_the_setting(settings: Any) -> None:
    signup = reverse("console:signup")
    form = {
        "username": "walk-in",
        "email": "walk@example.com",
        "password": PASSWORD,
        "password2": PASSWORD,
    }
    settings.XMEMO_OPEN_SIGNUP = False
    assert Client().get(signup).status_code == 404
    assert Client().post(signup, form).status_code == 404
    assert 'href="/signup/"' not in Client().get(reverse("console:login")).content.decode()
    assert not User.objects.filter(username="walk-in").exists()

    settings.XMEMO_OPEN_SIGNUP = True
    assert 'href="/signup/"' in Client().get(reverse("console:login")).content.decode()
    mismatch = Client().post(signup, {**form, "password2": "something else"})
    assert mismatch.status_code == 400
    assert not User.objects.filter(username="walk-in").exists()
    client = Client()
    response = client.post(signup, form)
    assert response.status_code == 302
    user = User.objects.get(username="walk-in")
    assert user.email == "walk@example.com"
    assert Membership.objects.get(user=user).workspace.slug == "walk-in"
    assert client.get("/")["Location"] == reverse("console:skill_list", args=["walk-in"])
    assert AuditEntry.objects.filter(action="account.signup", target_id="walk-in").exists()
    twin = Client().post(signup, {**form, "username": "walk-in-2", "email": "WALK@example.com"})
    assert twin.status_code == 409
    assert not User.objects.filter(username="walk-in-2").exists()


def test_password_reset_by_email(env: Env) -> None:
    env.member.email = "member@example.com"
    env.member.set_password(PASSWORD)
    env.member.save()
    client = Client()
    sent = client.post(reverse("console:password_reset"), {"email": "member@example.com"})
    assert sent["Location"] == reverse("console:password_reset_done")
    [message] = mail.outbox
    link = re.search(r"https?://[^/\s]+(/password-reset/[^\s]+/)", str(message.body))
    assert link is not None, message.body
    form_page = client.get(link.group(1), follow=True)
    assert form_page.status_code == 200
    set_url = form_page.redirect_chain[-1][0]
    done = client.post(
        set_url, {"new_password1": "a new password 1", "new_password2": "a new password 1"}
    )
    assert done["Location"] == reverse("console:password_reset_complete")
    env.member.refresh_from_db()
    assert env.member.check_password("a new password 1")
    assert client.get(link.group(1)).status_code == 200  # the used link shows "invalid"
    assert "invalid" in client.get(link.group(1), follow=True).content.decode()
