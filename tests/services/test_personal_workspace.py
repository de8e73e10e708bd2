"""Every user has a personal workspace, however the user comes to exist (docs/contract.md §2)."""

from __future__ import annotations

import json

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from skills_app.models import Membership, Workspace
from tests.factories import make_token


def _personal(username: str) -> Workspace:
    user = get_user_model().objects.get(username=username)
    return Workspace.objects.get(
        kind=Workspace.Kind.PERSONAL, memberships__user=user, memberships__role="owner"
    )


def _token_without_workspace_works(username: str) -> None:
    user = get_user_model().objects.get(username=username)
    _, secret = make_token(user, ["workspace:admin", "skills:read"])
    answer = Client().post(
        "/v1/tokens",
        json.dumps({"name": "cli", "scopes": ["skills:read"]}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {secret}"},
    )
    assert answer.status_code == 201, answer.content


def test_a_user_added_in_the_django_admin_gets_a_personal_workspace(db: None) -> None:
    get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client = Client()
    client.login(username="root", password="pw")
    added = client.post(
        "/admin/auth/user/add/",
        {
            "username": "Jane.Doe@Example",
            "password1": "a long Passphrase 9!",
            "password2": "a long Passphrase 9!",
            "usable_password": "true",
        },
    )
    assert added.status_code == 302, added.content.decode()[:2000]
    workspace = _personal("Jane.Doe@Example")
    assert Membership.objects.filter(workspace=workspace).count() == 1
    _token_without_workspace_works("Jane.Doe@Example")


def test_createsuperuser_gets_a_personal_workspace(db: None) -> None:
    call_command("createsuperuser", username="boss", email="boss@example.com", interactive=False)
    assert _personal("boss").slug == "boss"
    _token_without_workspace_works("boss")


def test_a_username_whose_slug_is_taken_still_gets_its_own_workspace(db: None) -> None:
    get_user_model().objects.create_user("taken")
    get_user_model().objects.create_user("Taken")
    first, second = _personal("taken"), _personal("Taken")
    assert first.pk != second.pk
    assert first.slug == "taken"
    assert second.slug.startswith("taken-")


def test_create_user_command_keeps_slug_equal_to_username(db: None) -> None:
    call_command("create_user", "alice")
    call_command("create_user", "alice")
    assert _personal("alice").slug == "alice"
    assert Workspace.objects.filter(kind=Workspace.Kind.PERSONAL).count() == 1
