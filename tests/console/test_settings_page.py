"""The team settings page: name, review and script flags, and write-only secrets."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from skills_app.models import AuditEntry, Workspace, WorkspaceSecret
from tests.factories import Env

pytestmark = pytest.mark.django_db

VALUE = "console-secret-8d7f6a5e4c3b"


def _settings(ws: Workspace) -> str:
    return reverse("console:settings", args=[ws.slug])


def test_owner_changes_settings_and_sets_a_write_only_secret(
    owner_client: Client, env: Env
) -> None:
    page = owner_client.get(_settings(env.team))
    assert page.status_code == 200
    changed = owner_client.post(
        _settings(env.team),
        {"form": "settings", "name": "Platform", "require_distinct_reviewer": "on"},
    )
    assert changed.status_code == 302
    team = Workspace.objects.get(pk=env.team.pk)
    assert (team.name, team.require_distinct_reviewer, team.allow_dangerous_scripts) == (
        "Platform",
        True,
        False,
    )
    stored = owner_client.post(
        _settings(env.team), {"form": "secret", "secret_name": "DEPLOY_TOKEN", "value": VALUE}
    )
    assert stored.status_code == 302
    assert WorkspaceSecret.objects.filter(workspace=env.team, name="DEPLOY_TOKEN").exists()
    shown = owner_client.get(_settings(env.team)).content.decode()
    assert "DEPLOY_TOKEN" in shown
    assert VALUE not in shown
    deleted = owner_client.post(
        _settings(env.team), {"form": "delete_secret", "secret_name": "DEPLOY_TOKEN"}
    )
    assert deleted.status_code == 302
    assert not WorkspaceSecret.objects.exists()
    assert AuditEntry.objects.filter(action="workspace.settings.change").count() == 1
    assert VALUE not in str(list(AuditEntry.objects.values_list("data", flat=True)))


def test_bad_secret_names_are_explained_and_nothing_is_stored(
    owner_client: Client, env: Env
) -> None:
    answer = owner_client.post(
        _settings(env.team), {"form": "secret", "secret_name": "no-dashes", "value": "x"}
    )
    assert answer.status_code == 400
    assert "letters, digits and" in answer.content.decode()
    assert not WorkspaceSecret.objects.exists()


def test_members_are_refused_and_outsiders_get_404(
    member_client: Client, env: Env, client: Client
) -> None:
    assert member_client.get(_settings(env.team)).status_code == 403
    refused = member_client.post(
        _settings(env.team), {"form": "secret", "secret_name": "X", "value": "y"}
    )
    assert refused.status_code == 403
    client.force_login(env.outsider)
    assert client.get(_settings(env.team)).status_code == 404
    assert not WorkspaceSecret.objects.exists()


def test_the_django_admin_changes_settings_through_the_audited_service(
    env: Env, client: Client
) -> None:
    get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client.login(username="root", password="pw")
    answer = client.post(
        f"/admin/skills_app/workspace/{env.team.pk}/change/",
        {
            "name": "Renamed",
            "cloud_skills_enabled": "on",
            "require_distinct_reviewer": "on",  # as the form shows it: a new team's default
            "allow_dangerous_scripts": "on",
        },
    )
    assert answer.status_code == 302, answer.content.decode()[-2000:]
    team = Workspace.objects.get(pk=env.team.pk)
    assert (team.name, team.allow_dangerous_scripts) == ("Renamed", True)
    entry = AuditEntry.objects.get(workspace=team, action="workspace.settings.change")
    assert entry.actor_label == "root"
    assert entry.via == "admin"
    assert entry.data == {
        "name": {"from": "Team", "to": "Renamed"},
        "allow_dangerous_scripts": {"from": False, "to": True},
    }


def test_a_team_of_one_switches_the_distinct_reviewer_off_and_the_page_says_what_that_means(
    owner_client: Client, env: Env
) -> None:
    """Contract §16: new teams require a reviewer other than the author; a team of one can
    switch that off (audited), and the page says what either choice means."""
    from skills_app.access import Actor
    from skills_app.services.accounts import workspace_create

    solo = workspace_create(actor=Actor(user=env.owner), slug="solo", name="Solo")
    page = owner_client.get(_settings(solo)).content.decode()
    box = re.search(r'<input[^>]*name="require_distinct_reviewer"[^>]*>', page)
    assert box is not None
    assert " checked" in box.group(0)
    assert "approve their own proposals" in page
    assert "a team of one" in page
    off = owner_client.post(_settings(solo), {"form": "settings", "name": "Solo"})
    assert off.status_code == 302
    assert Workspace.objects.get(pk=solo.pk).require_distinct_reviewer is False
    entry = AuditEntry.objects.get(action="workspace.settings.change", workspace=solo)
    assert entry.data == {"require_distinct_reviewer": {"from": True, "to": False}}
    assert entry.actor_label == env.owner.username


def test_a_personal_workspace_is_not_offered_a_reviewer_rule(
    owner_client: Client, env: Env
) -> None:
    """Nobody reviews in a personal workspace, so its settings neither show nor change the rule."""
    before = Workspace.objects.get(pk=env.personal.pk).require_distinct_reviewer
    page = owner_client.get(_settings(env.personal)).content.decode()
    assert 'name="require_distinct_reviewer"' not in page
    saved = owner_client.post(_settings(env.personal), {"form": "settings", "name": "Mine"})
    assert saved.status_code == 302
    after = Workspace.objects.get(pk=env.personal.pk)
    assert (after.name, after.require_distinct_reviewer) == ("Mine", before)


def test_the_team_permission_mode_is_chosen_on_the_settings_page_and_audited(
    owner_client: Client, env: Env
) -> None:
    """Contract §21: a team's ``permission_mode`` (owners and admins, audited), offered with
    what each mode lets scripts do; a value outside the three is refused and changes nothing."""
    page = owner_client.get(_settings(env.team)).content.decode()
    select = re.search(r'<select[^>]*name="permission_mode"[^>]*>(.*?)</select>', page, re.S)
    assert select is not None
    options = re.findall(r'<option value="([^"]*)"( selected)?', select.group(1))
    assert options == [
        ("mutating-with-confirm", " selected"),
        ("dual-sign-required", ""),
        ("read-only", ""),
    ]
    assert "two distinct reviewers" in page
    form = {"form": "settings", "name": env.team.name, "require_distinct_reviewer": "on"}
    refused = owner_client.post(_settings(env.team), {**form, "permission_mode": "anything"})
    assert refused.status_code == 400
    assert Workspace.objects.get(pk=env.team.pk).permission_mode == "mutating-with-confirm"
    changed = owner_client.post(
        _settings(env.team), {**form, "permission_mode": "dual-sign-required"}
    )
    assert changed.status_code == 302
    assert Workspace.objects.get(pk=env.team.pk).permission_mode == "dual-sign-required"
    entry = AuditEntry.objects.get(workspace=env.team, action="workspace.settings.change")
    assert entry.data == {
        "permission_mode": {"from": "mutating-with-confirm", "to": "dual-sign-required"}
    }
    assert entry.actor_label == env.owner.username
    shown = owner_client.get(_settings(env.team)).content.decode()
    assert '<option value="dual-sign-required" selected>' in shown
    # The rest of the form left out: the mode stays as it is.
    owner_client.post(_settings(env.team), form)
    assert Workspace.objects.get(pk=env.team.pk).permission_mode == "dual-sign-required"


def test_admins_set_the_permission_mode_members_cannot_and_personal_has_none(
    env: Env, client: Client, member_client: Client, owner_client: Client
) -> None:
    client.force_login(env.admin)
    form = {"form": "settings", "name": env.team.name, "require_distinct_reviewer": "on"}
    answer = client.post(_settings(env.team), {**form, "permission_mode": "read-only"})
    assert answer.status_code == 302
    assert Workspace.objects.get(pk=env.team.pk).permission_mode == "read-only"
    refused = member_client.post(_settings(env.team), {**form, "permission_mode": "read-only"})
    assert refused.status_code == 403
    page = owner_client.get(_settings(env.personal)).content.decode()
    assert 'name="permission_mode"' not in page
    before = Workspace.objects.get(pk=env.personal.pk).permission_mode
    mine = {"form": "settings", "name": "Mine", "permission_mode": "read-only"}
    saved = owner_client.post(_settings(env.personal), mine)
    assert saved.status_code == 302
    assert Workspace.objects.get(pk=env.personal.pk).permission_mode == before
