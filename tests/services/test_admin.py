"""The Django admin shows revisions and components read-only: no path edits content; what staff
change in it goes through the audited services."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from skills_app import errors
from skills_app.models import AuditEntry, SkillComponent, SkillRevision, Workspace
from skills_app.services.workspace_settings import workspace_feature_set
from tests.factories import Env, actor_for, save


def test_admin_shows_revisions_but_cannot_change_them(env: Env, client: Client) -> None:
    rev = save(env.owner, env.personal).revision
    comp = SkillComponent.objects.get(revision=rev)
    get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client.login(username="root", password="pw")
    page = client.get(f"/admin/skills_app/skillrevision/{rev.pk}/change/")
    assert page.status_code == 200
    assert rev.name in page.content.decode()
    assert 'name="_save"' not in page.content.decode()
    for url in (
        f"/admin/skills_app/skillrevision/{rev.pk}/change/",
        f"/admin/skills_app/skillcomponent/{comp.pk}/change/",
    ):
        response = client.post(url, {"name": "hacked", "instruction_body": "hacked", "size": 1})
        assert response.status_code == 403
    assert client.get("/admin/skills_app/skillrevision/add/").status_code == 403
    assert (
        client.post(
            f"/admin/skills_app/skillrevision/{rev.pk}/delete/", {"post": "yes"}
        ).status_code
        == 403
    )
    rev.refresh_from_db()
    assert rev.name == "Deploy runbook"
    assert SkillRevision.objects.count() == 1


def _staff_client(client: Client) -> Client:
    get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client.login(username="root", password="pw")
    return client


def test_staff_switching_cloud_skills_in_the_admin_is_audited(env: Env, client: Client) -> None:
    staff = _staff_client(client)
    team = env.team
    assert team.cloud_skills_enabled
    answer = staff.post(
        f"/admin/skills_app/workspace/{team.pk}/change/",
        {
            "name": team.name,
            "require_distinct_reviewer": "on" if team.require_distinct_reviewer else "",
            "allow_dangerous_scripts": "on" if team.allow_dangerous_scripts else "",
        },  # cloud_skills_enabled unchecked: switched off
    )
    assert answer.status_code == 302, answer.content.decode()[-2000:]
    team.refresh_from_db()
    assert team.cloud_skills_enabled is False
    entry = AuditEntry.objects.get(workspace=team, action="workspace.feature.change")
    assert entry.data == {"cloud_skills_enabled": {"from": True, "to": False}}
    assert (entry.actor_label, entry.via) == ("root", "admin")
    # Nothing else changed, so no settings entry.
    assert not AuditEntry.objects.filter(workspace=team, action="workspace.settings.change")


def test_the_admin_list_switch_is_audited_too(env: Env, client: Client) -> None:
    staff = _staff_client(client)
    workspaces = list(Workspace.objects.order_by("pk"))
    form: dict[str, str] = {
        "form-TOTAL_FORMS": str(len(workspaces)),
        "form-INITIAL_FORMS": str(len(workspaces)),
        "_save": "Save",
    }
    for i, ws in enumerate(workspaces):
        form[f"form-{i}-id"] = str(ws.pk)
        # As the page sends it: the field's default is callable, so Django posts its initial.
        form[f"initial-form-{i}-cloud_skills_enabled"] = str(ws.cloud_skills_enabled)
        if ws.pk != env.personal.pk:
            form[f"form-{i}-cloud_skills_enabled"] = "on"
    answer = staff.post("/admin/skills_app/workspace/", form)
    assert answer.status_code == 302, answer.content.decode()[-2000:]
    assert not Workspace.objects.get(pk=env.personal.pk).cloud_skills_enabled
    entries = AuditEntry.objects.filter(action="workspace.feature.change")
    assert [e.workspace_id for e in entries] == [env.personal.pk]


def test_only_staff_switch_the_feature(env: Env) -> None:
    with pytest.raises(errors.PermissionDenied):
        workspace_feature_set(actor=actor_for(env.owner), workspace=env.team, enabled=False)
    env.team.refresh_from_db()
    assert env.team.cloud_skills_enabled
    assert not AuditEntry.objects.filter(action="workspace.feature.change").exists()
