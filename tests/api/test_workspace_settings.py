"""Workspace settings and secrets belong to the workspace's owners and admins (docs/contract.md §2,
§7)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection

from skills_app.models import AuditEntry, Workspace, WorkspaceSecret
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env

VALUE = "sk-live-6f1c0e4b9a7d2c55"


def _secrets(ws: Workspace) -> str:
    return f"/v1/workspaces/{ws.slug}/secrets"


def _every_trace(ws: Workspace) -> str:
    """Everything of the workspace a reader could see afterwards: every audit entry."""
    return json.dumps(list(AuditEntry.objects.filter(workspace=ws).values()), default=str)


@pytest.mark.parametrize("role", ["owner", "admin"])
def test_owners_and_admins_set_list_replace_and_delete_secrets(
    env: Env, api_for: ApiFactory, role: str
) -> None:
    api = api_for(env.role_user(role))
    answers = [api.put(f"{_secrets(env.team)}/DEPLOY_TOKEN", {"value": VALUE})]
    assert answers[0].status_code == 200, answers[0].content
    assert set(answers[0].json()) == {"name", "created_at", "updated_at"}
    answers.append(api.put(f"{_secrets(env.team)}/DEPLOY_TOKEN", {"value": VALUE + "-2"}))
    answers.append(api.get(_secrets(env.team)))
    assert [s["name"] for s in answers[-1].json()["results"]] == ["DEPLOY_TOKEN"]
    assert set(answers[-1].json()["results"][0]) == {"name", "created_at", "updated_at"}
    answers.append(api.delete(f"{_secrets(env.team)}/DEPLOY_TOKEN"))
    assert answers[-1].status_code == 204
    assert not WorkspaceSecret.objects.exists()
    assert api.delete(f"{_secrets(env.team)}/DEPLOY_TOKEN").status_code == 404
    actions = list(
        AuditEntry.objects.filter(workspace=env.team, action__startswith="workspace.secret")
        .order_by("id")
        .values_list("action", "target_id")
    )
    assert actions == [
        ("workspace.secret.set", "DEPLOY_TOKEN"),
        ("workspace.secret.set", "DEPLOY_TOKEN"),
        ("workspace.secret.delete", "DEPLOY_TOKEN"),
    ]
    # Write-only: no answer and no audit entry ever holds the value.
    for answer in answers:
        assert VALUE not in answer.content.decode()
    assert VALUE not in _every_trace(env.team)
    assert VALUE not in api.get(f"/v1/workspaces/{env.team.slug}/audit").content.decode()


def test_a_personal_owner_manages_their_own_secrets(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    assert api.put(f"{_secrets(env.personal)}/API_KEY", {"value": VALUE}).status_code == 200
    assert [s["name"] for s in api.get(_secrets(env.personal)).json()["results"]] == ["API_KEY"]


def test_members_cannot_read_or_set_secrets_and_outsiders_see_nothing(
    env: Env, api_for: ApiFactory
) -> None:
    api_for(env.owner).put(f"{_secrets(env.team)}/DEPLOY_TOKEN", {"value": VALUE})
    member = api_for(env.member)
    for answer in (
        member.get(_secrets(env.team)),
        member.put(f"{_secrets(env.team)}/DEPLOY_TOKEN", {"value": "mine"}),
        member.put(f"{_secrets(env.team)}/OTHER", {"value": "mine"}),
        member.delete(f"{_secrets(env.team)}/DEPLOY_TOKEN"),
    ):
        assert (answer.status_code, error_code(answer)) == (403, "PERMISSION_DENIED")
    outsider = api_for(env.outsider)
    for answer in (
        outsider.get(_secrets(env.team)),
        outsider.put(f"{_secrets(env.team)}/DEPLOY_TOKEN", {"value": "mine"}),
        outsider.delete(f"{_secrets(env.team)}/DEPLOY_TOKEN"),
        outsider.patch(f"/v1/workspaces/{env.team.slug}", {"name": "Mine"}),
    ):
        assert (answer.status_code, error_code(answer)) == (404, "NOT_FOUND")
    no_scope = api_for(env.owner, scopes=["skills:read", "skills:write", "skills:execute"])
    refused = no_scope.put(f"{_secrets(env.team)}/DEPLOY_TOKEN", {"value": "x"})
    assert (refused.status_code, error_code(refused)) == (403, "PERMISSION_DENIED")
    assert WorkspaceSecret.objects.count() == 1
    assert VALUE not in _every_trace(env.team)


@pytest.mark.parametrize(
    ("name", "body", "field"),
    [
        ("1BAD", {"value": "x"}, "name"),
        ("HAS-DASH", {"value": "x"}, "name"),
        ("A" * 129, {"value": "x"}, "name"),
        ("OK", {}, "value"),
        ("OK", {"value": 7}, "value"),
        ("OK", {"value": "nul\x00byte"}, "value"),
        ("OK", {"value": "lone \ud800 surrogate"}, "value"),
        ("OK", {"value": "x" * 65_537}, "value"),
    ],
)
def test_bad_secrets_are_refused_and_nothing_is_stored(
    env: Env, api_for: ApiFactory, name: str, body: dict[str, Any], field: str
) -> None:
    answer = api_for(env.owner).put(f"{_secrets(env.team)}/{name}", body)
    assert answer.status_code == 400, answer.content
    assert error_code(answer) == "VALIDATION_ERROR"
    assert answer.json()["error"]["details"]["field"] == field
    assert not WorkspaceSecret.objects.exists()


def test_the_stored_value_is_not_plaintext(env: Env, api_for: ApiFactory) -> None:
    assert api_for(env.owner).put(f"{_secrets(env.team)}/DEPLOY_TOKEN", {"value": VALUE})
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {WorkspaceSecret._meta.db_table}")
        rows = cursor.fetchall()
    assert len(rows) == 1
    assert VALUE not in repr(rows)
    assert VALUE.encode() not in b"".join(
        bytes(v) if isinstance(v, bytes | memoryview) else str(v).encode() for v in rows[0]
    )


def test_owners_and_admins_change_team_settings_audited(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.admin)
    answer = api.patch(
        f"/v1/workspaces/{env.team.slug}",
        {"name": "Platform", "require_distinct_reviewer": False, "allow_dangerous_scripts": True},
    )
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["slug"] == env.team.slug
    assert body["name"] == "Platform"
    assert body["role"] == "admin"
    assert body["require_distinct_reviewer"] is False
    assert body["allow_dangerous_scripts"] is True
    team = Workspace.objects.get(pk=env.team.pk)
    assert (team.name, team.require_distinct_reviewer, team.allow_dangerous_scripts) == (
        "Platform",
        False,
        True,
    )
    entry = AuditEntry.objects.get(workspace=team, action="workspace.settings.change")
    assert entry.actor == env.admin
    assert entry.data == {
        "name": {"from": "Team", "to": "Platform"},
        "require_distinct_reviewer": {"from": True, "to": False},
        "allow_dangerous_scripts": {"from": False, "to": True},
    }
    # Only what is sent changes.
    again = api.patch(f"/v1/workspaces/{env.team.slug}", {"allow_dangerous_scripts": False})
    assert again.json()["allow_dangerous_scripts"] is False
    assert again.json()["name"] == "Platform"


def test_members_cannot_change_settings_and_bad_input_changes_nothing(
    env: Env, api_for: ApiFactory
) -> None:
    path = f"/v1/workspaces/{env.team.slug}"
    refused = api_for(env.member).patch(path, {"allow_dangerous_scripts": True})
    assert (refused.status_code, error_code(refused)) == (403, "PERMISSION_DENIED")
    owner = api_for(env.owner)
    for body in (
        {"name": ""},
        {"name": "x" * 201},
        {"require_distinct_reviewer": "yes please"},
        {"allow_dangerous_scripts": None},
    ):
        answer = owner.patch(path, body)
        assert answer.status_code == 400, (body, answer.content)
        assert error_code(answer) == "VALIDATION_ERROR"
    team = Workspace.objects.get(pk=env.team.pk)
    assert (team.name, team.require_distinct_reviewer, team.allow_dangerous_scripts) == (
        "Team",
        True,  # a new team's default
        False,
    )
    assert not AuditEntry.objects.filter(action="workspace.settings.change").exists()
