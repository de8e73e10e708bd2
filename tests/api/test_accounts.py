"""Workspaces, members, tokens and the audit log (docs/contract.md §7)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from skills_app.domain.tokens import token_hash
from skills_app.models import ApiToken, AuditEntry, Membership, Workspace
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env, make_user, publish, save

TOKEN_CREATED_FIELDS = {
    "token_id",
    "token",
    "name",
    "scopes",
    "workspace",
    "profile",
    "expires_at",
    "created_at",
    "owner",
    "role",
    "permission_mode",
}


def test_workspaces_list_and_create(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.admin)
    page = api.get("/v1/workspaces").json()
    assert {(w["slug"], w["kind"], w["role"]) for w in page["results"]} == {
        (env.admin.username, "personal", "owner"),
        (env.team.slug, "team", "admin"),
    }
    team = next(w for w in page["results"] if w["kind"] == "team")
    assert set(team) == {
        "slug",
        "name",
        "kind",
        "role",
        "cloud_skills_enabled",
        "require_distinct_reviewer",
        "allow_dangerous_scripts",
        "required_approvals",
        "permission_mode",
        "created_at",
    }
    created = api.post("/v1/workspaces", {"slug": "platform", "name": "Platform team"})
    assert created.status_code == 201
    assert created.json()["slug"] == "platform"
    assert created.json()["kind"] == "team"
    assert created.json()["role"] == "owner"
    assert Membership.objects.get(workspace__slug="platform").user == env.admin
    taken = api.post("/v1/workspaces", {"slug": "platform", "name": "Again"})
    assert taken.status_code == 409
    assert error_code(taken) == "CONFLICT"
    bad = api.post("/v1/workspaces", {"slug": "Bad Slug", "name": "x"})
    assert error_code(bad) == "VALIDATION_ERROR"
    no_scope = api_for(env.admin, scopes=["skills:read", "skills:write"]).post(
        "/v1/workspaces", {"slug": "other", "name": "Other"}
    )
    assert no_scope.status_code == 403
    assert not Workspace.objects.filter(slug="other").exists()


def test_members_add_change_remove(env: Env, api_for: ApiFactory) -> None:
    newcomer = make_user()
    owner, member = api_for(env.owner), api_for(env.member)
    url = f"/v1/workspaces/{env.team.slug}/members"
    listing = member.get(url).json()["results"]
    assert {(m["username"], m["role"]) for m in listing} == {
        (env.owner.username, "owner"),
        (env.admin.username, "admin"),
        (env.member.username, "member"),
        (env.member2.username, "member"),
    }
    denied = member.post(url, {"username": newcomer.username, "role": "member"})
    assert denied.status_code == 403
    added = owner.post(url, {"username": newcomer.username, "role": "member"})
    assert added.status_code == 201
    assert added.json()["username"] == newcomer.username
    assert added.json()["role"] == "member"
    dup = owner.post(url, {"username": newcomer.username, "role": "member"})
    assert error_code(dup) == "CONFLICT"
    nobody = owner.post(url, {"username": "ghost", "role": "member"})
    assert nobody.status_code == 404
    bad_role = owner.post(url, {"username": newcomer.username, "role": "king"})
    assert error_code(bad_role) == "VALIDATION_ERROR"
    changed = owner.patch(f"{url}/{newcomer.username}", {"role": "admin"})
    assert changed.status_code == 200
    assert changed.json()["role"] == "admin"
    last_owner = owner.patch(f"{url}/{env.owner.username}", {"role": "member"})
    assert last_owner.status_code == 409
    removed = owner.delete(f"{url}/{newcomer.username}")
    assert removed.status_code == 204
    assert not Membership.objects.filter(workspace=env.team, user=newcomer).exists()
    again = owner.delete(f"{url}/{newcomer.username}")
    assert again.status_code == 404


def test_a_removed_member_loses_access_at_once(env: Env, api_for: ApiFactory) -> None:
    publish(env.member, env.team, slug="deploy")
    agent = api_for(env.member2)
    assert agent.get("/v1/recall", {"slug": "deploy"}).status_code == 200
    api_for(env.owner).delete(f"/v1/workspaces/{env.team.slug}/members/{env.member2.username}")
    response = agent.get("/v1/recall", {"slug": "deploy"})
    assert response.status_code == 404


def test_personal_workspace_has_no_members_to_manage(env: Env, api_for: ApiFactory) -> None:
    response = api_for(env.owner).post(
        f"/v1/workspaces/{env.personal.slug}/members",
        {"username": env.member.username, "role": "member"},
    )
    assert response.status_code == 400
    assert error_code(response) == "VALIDATION_ERROR"


def test_tokens_create_list_revoke(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    expires = (timezone.now() + timedelta(days=1)).replace(microsecond=0)
    created = api.post(
        "/v1/tokens",
        {
            "name": "ci",
            "scopes": ["skills:read"],
            "workspace": env.team.slug,
            "profile": "cursor-plugin",
            "expires_at": expires.isoformat(),
        },
    )
    assert created.status_code == 201, created.content
    data = created.json()
    assert set(data) == TOKEN_CREATED_FIELDS
    assert data["token"].startswith("xm_")
    assert data["name"] == "ci"
    assert data["scopes"] == ["skills:read"]
    assert data["workspace"] == env.team.slug
    assert data["profile"] == "cursor-plugin"
    assert data["expires_at"].startswith(expires.isoformat()[:19])
    stored = ApiToken.objects.get(token_id=data["token_id"])
    assert stored.secret_hash == token_hash(data["token"])
    assert data["token"] not in str(ApiToken.objects.filter(pk=stored.pk).values().get())
    listing = api.get("/v1/tokens")
    assert data["token"] not in listing.content.decode()
    listed = {t["token_id"]: t for t in listing.json()["results"]}
    assert listed[data["token_id"]]["revoked_at"] is None
    assert "token" not in listed[data["token_id"]]
    # The new token works, then stops working once revoked.
    new_auth = {"Authorization": f"Bearer {data['token']}"}
    assert api.client.get("/v1/workspaces", headers=new_auth).status_code == 200
    revoked = api.delete(f"/v1/tokens/{data['token_id']}")
    assert revoked.status_code == 204
    after = api.client.get("/v1/workspaces", headers=new_auth)
    assert after.status_code == 401
    assert error_code(after) == "AUTHENTICATION_REQUIRED"
    assert AuditEntry.objects.filter(action="token.revoke", target_id=data["token_id"]).exists()


def test_token_validation_and_ownership(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    for payload in (
        {"name": "x", "scopes": []},
        {"name": "x", "scopes": ["root"]},
        {"name": "", "scopes": ["skills:read"]},
        {"name": "x", "scopes": ["skills:read"], "profile": "nope"},
        {"name": "x", "scopes": ["skills:read"], "expires_at": "2001-01-01T00:00:00Z"},
        {"name": "x", "scopes": ["skills:read"], "expires_at": "not a date"},
    ):
        response = api.post("/v1/tokens", payload)
        assert response.status_code == 400, payload
        assert error_code(response) == "VALIDATION_ERROR"
    foreign_ws = api.post(
        "/v1/tokens", {"name": "x", "scopes": ["skills:read"], "workspace": "nope"}
    )
    assert foreign_ws.status_code == 404
    other = api_for(env.member)
    theirs = ApiToken.objects.filter(user=env.member).first()
    assert theirs is not None
    assert api.delete(f"/v1/tokens/{theirs.token_id}").status_code == 404
    assert ApiToken.objects.get(pk=theirs.pk).revoked_at is None
    assert other.get("/v1/tokens").status_code == 200


def test_a_token_cannot_mint_wider_tokens(env: Env, api_for: ApiFactory) -> None:
    narrow = api_for(env.owner, scopes=["skills:read", "workspace:admin"], workspace=env.team)
    wider = narrow.post("/v1/tokens", {"name": "x", "scopes": ["skills:write"]})
    assert wider.status_code == 403
    unrestricted = narrow.post("/v1/tokens", {"name": "x", "scopes": ["skills:read"]})
    assert unrestricted.status_code == 403
    same = narrow.post(
        "/v1/tokens", {"name": "x", "scopes": ["skills:read"], "workspace": env.team.slug}
    )
    assert same.status_code == 201
    no_admin = api_for(env.owner, scopes=["skills:read"]).get("/v1/tokens")
    assert no_admin.status_code == 403


def test_audit_log_newest_first_admins_only(env: Env, api_for: ApiFactory) -> None:
    save(env.member, env.team, slug="a")
    publish(env.member, env.team, slug="b")
    admin = api_for(env.admin)
    url = f"/v1/workspaces/{env.team.slug}/audit"
    page = admin.get(url).json()
    entries = page["results"]
    assert entries, page
    assert set(entries[0]) == {
        "action",
        "actor",
        "target_type",
        "target_id",
        "data",
        "ip",
        "via",
        "created_at",
    }
    stamps = [e["created_at"] for e in entries]
    assert stamps == sorted(stamps, reverse=True)
    assert entries[0]["action"] == "skills.revision.approve"
    approvals = admin.get(url, {"action": "skills.revision.approve"}).json()["results"]
    assert [e["action"] for e in approvals] == ["skills.revision.approve"]
    prefixed = admin.get(url, {"action": "skills.revision"}).json()["results"]
    assert {e["action"] for e in prefixed} >= {"skills.revision.create", "skills.revision.approve"}
    paged = admin.get(url, {"limit": 1})
    assert paged.json()["next_cursor"]
    second = admin.get(url, {"limit": 1, "cursor": paged.json()["next_cursor"]}).json()["results"]
    assert second[0]["created_at"] <= paged.json()["results"][0]["created_at"]
    assert second != paged.json()["results"]
    member = api_for(env.member).get(url)
    assert member.status_code == 403
    assert error_code(member) == "PERMISSION_DENIED"
    stranger = api_for(env.outsider).get(url)
    assert stranger.status_code == 404
