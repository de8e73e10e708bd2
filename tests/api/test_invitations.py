"""Invitations over the API (docs/contract.md §7, §16): invite, list, revoke; the link goes by
e-mail only."""

from __future__ import annotations

import hashlib

import pytest
from django.core import mail

from skills_app.models import AuditEntry, Invitation
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env
from tests.mail import last_invite_token, mail_on_commit  # noqa: F401 (fixture)

FIELDS = {"id", "email", "role", "state", "invited_by", "created_at", "expires_at"}


pytestmark = pytest.mark.usefixtures("mail_on_commit")


def _path(env: Env, *rest: str) -> str:
    return "/".join([f"/v1/workspaces/{env.team.slug}/invitations", *rest])


def test_an_admin_invites_and_only_a_hash_of_the_mailed_link_is_stored(
    env: Env, api_for: ApiFactory
) -> None:
    response = api_for(env.admin).post(_path(env), {"email": "New@Example.COM", "role": "member"})
    assert response.status_code == 201, response.content
    body = response.json()
    assert set(body) == FIELDS
    assert (body["email"], body["role"], body["state"], body["invited_by"]) == (
        "New@example.com",
        "member",
        "pending",
        env.admin.username,
    )
    [message] = mail.outbox
    assert message.to == ["New@example.com"]
    assert env.team.name in message.subject
    token = last_invite_token()
    stored = Invitation.objects.get(invitation_id=body["id"])
    assert stored.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in response.content.decode()
    entry = AuditEntry.objects.get(action="workspace.invitation.create")
    assert (entry.workspace, entry.actor, entry.target_id) == (env.team, env.admin, body["id"])
    assert entry.data == {"email": "New@example.com", "role": "member"}


def test_list_shows_pending_invitations_to_admins_only(env: Env, api_for: ApiFactory) -> None:
    admin = api_for(env.admin)
    created = admin.post(_path(env), {"email": "a@example.com", "role": "admin"}).json()
    page = admin.get(_path(env)).json()
    assert [row["id"] for row in page["results"]] == [created["id"]]
    assert page["next_cursor"] is None
    denied = api_for(env.member).get(_path(env))
    assert (denied.status_code, error_code(denied)) == (403, "PERMISSION_DENIED")
    hidden = api_for(env.outsider).get(_path(env))
    assert (hidden.status_code, error_code(hidden)) == (404, "NOT_FOUND")


def test_bad_invitations_are_refused_and_nothing_is_stored(env: Env, api_for: ApiFactory) -> None:
    env.member.email = "member@example.com"
    env.member.save()
    admin = api_for(env.admin)
    assert admin.post(_path(env), {"email": "dup@example.com", "role": "member"}).status_code == 201
    cases = [
        (admin, _path(env), {"email": "not-an-address", "role": "member"}, 400, "VALIDATION_ERROR"),
        (admin, _path(env), {"email": "x@example.com", "role": "king"}, 400, "VALIDATION_ERROR"),
        (admin, _path(env), {"email": "DUP@example.com", "role": "member"}, 409, "CONFLICT"),
        (admin, _path(env), {"email": "member@example.com", "role": "admin"}, 409, "CONFLICT"),
        (admin, _path(env), {"email": "o@example.com", "role": "owner"}, 403, "PERMISSION_DENIED"),
        (
            api_for(env.member),
            _path(env),
            {"email": "m@example.com", "role": "member"},
            403,
            "PERMISSION_DENIED",
        ),
        (
            admin,
            f"/v1/workspaces/{env.admin.username}/invitations",
            {"email": "p@example.com", "role": "member"},
            400,
            "VALIDATION_ERROR",
        ),
    ]
    for api, path, body, status, code in cases:
        response = api.post(path, body)
        assert (response.status_code, error_code(response)) == (status, code), body
    assert list(Invitation.objects.values_list("email", flat=True)) == ["dup@example.com"]
    assert len(mail.outbox) == 1
    assert AuditEntry.objects.filter(action="workspace.invitation.create").count() == 1
    # An owner may invite an owner.
    owner = api_for(env.owner).post(_path(env), {"email": "o@example.com", "role": "owner"})
    assert owner.status_code == 201


def test_revoke_ends_the_link_once_and_is_audited(
    env: Env, api_for: ApiFactory, client: object
) -> None:
    admin = api_for(env.admin)
    created = admin.post(_path(env), {"email": "r@example.com", "role": "member"}).json()
    token = last_invite_token()
    assert api_for(env.member).delete(_path(env, created["id"])).status_code == 403
    assert admin.delete(_path(env, created["id"])).status_code == 204
    again = admin.delete(_path(env, created["id"]))
    assert (again.status_code, error_code(again)) == (409, "CONFLICT")
    missing = admin.delete(_path(env, "inv_nope"))
    assert (missing.status_code, error_code(missing)) == (404, "NOT_FOUND")
    assert admin.get(_path(env)).json()["results"] == []
    assert (
        AuditEntry.objects.filter(
            action="workspace.invitation.revoke", target_id=created["id"]
        ).count()
        == 1
    )
    page = admin.client.get(f"/invite/{token}/")
    assert page.status_code == 410
    assert "withdrawn" in page.content.decode()
