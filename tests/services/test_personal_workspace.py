"""Every user has a personal workspace, however the user comes to exist (docs/contract.md §2)."""

from __future__ import annotations

import json

from django.contrib.auth import get_user_model
from django.core.management import call_command, get_commands
from django.test import Client

from skills_app.models import ApiToken, AuditEntry, Membership, Workspace
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


def _admin() -> Client:
    get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client = Client()
    client.login(username="root", password="pw")
    return client


def _add_in_admin(client: Client, username: str) -> None:
    added = client.post(
        "/admin/auth/user/add/",
        {
            "username": username,
            "password1": "a long Passphrase 9!",
            "password2": "a long Passphrase 9!",
            "usable_password": "true",
        },
    )
    assert added.status_code == 302, added.content.decode()[:2000]


def test_a_user_added_in_the_django_admin_gets_a_personal_workspace(db: None) -> None:
    _add_in_admin(_admin(), "Jane.Doe@Example")
    workspace = _personal("Jane.Doe@Example")
    assert Membership.objects.filter(workspace=workspace).count() == 1
    entry = AuditEntry.objects.get(workspace=workspace, action="workspace.create")
    assert entry.actor_label == "Jane.Doe@Example"
    _token_without_workspace_works("Jane.Doe@Example")


def test_createsuperuser_is_the_projects_and_gets_a_personal_workspace(db: None) -> None:
    # skills_app comes before django.contrib.auth in INSTALLED_APPS, so its command wins.
    assert get_commands()["createsuperuser"] == "skills_app"
    call_command("createsuperuser", username="boss", email="boss@example.com", interactive=False)
    assert _personal("boss").slug == "boss"
    _token_without_workspace_works("boss")


def test_a_username_whose_slug_is_taken_still_gets_its_own_workspace(db: None) -> None:
    team = Workspace.objects.create(slug="taken", name="Taken", kind=Workspace.Kind.TEAM)
    client = _admin()
    _add_in_admin(client, "taken")
    _add_in_admin(client, "Taken.Too")
    first, second = _personal("taken"), _personal("Taken.Too")
    assert len({team.pk, first.pk, second.pk}) == 3
    assert first.slug.startswith("taken-")
    assert second.slug == "taken-too"


def test_no_signal_makes_the_workspace_every_path_calls_the_service(db: None) -> None:
    """The ORM alone (no service) makes a bare user: the paths above call the service."""
    user = get_user_model().objects.create_user("bare")
    assert not Workspace.objects.filter(memberships__user=user).exists()
    assert not Workspace.objects.filter(slug="bare").exists()


def test_deleting_users_in_the_admin_takes_their_access_and_keeps_their_workspace(
    db: None,
) -> None:
    client = _admin()
    for name in ("leaver", "other", "third"):
        _add_in_admin(client, name)
    users = {
        u.username: u
        for u in get_user_model().objects.filter(username__in=["leaver", "other", "third"])
    }
    for user in users.values():
        make_token(user, ["skills:read"])
    one = client.post(f"/admin/auth/user/{users['leaver'].pk}/delete/", {"post": "yes"})
    assert one.status_code == 302, one.content.decode()[:2000]
    bulk = client.post(
        "/admin/auth/user/",
        {
            "action": "delete_selected",
            "_selected_action": [users["other"].pk, users["third"].pk],
            "post": "yes",
        },
    )
    assert bulk.status_code == 302, bulk.content.decode()[:2000]
    assert not get_user_model().objects.filter(username__in=list(users)).exists()
    assert not ApiToken.objects.filter(user_id__in=[u.pk for u in users.values()]).exists()
    assert not Membership.objects.filter(user_id__in=[u.pk for u in users.values()]).exists()
    # Their workspaces (and the audit log in them) stay, as the ORM's cascade always left them.
    assert set(
        Workspace.objects.filter(slug__in=list(users)).values_list("slug", flat=True)
    ) == set(users)


def test_create_user_command_keeps_slug_equal_to_username(db: None) -> None:
    call_command("create_user", "alice")
    call_command("create_user", "alice")
    assert _personal("alice").slug == "alice"
    assert Workspace.objects.filter(kind=Workspace.Kind.PERSONAL).count() == 1
