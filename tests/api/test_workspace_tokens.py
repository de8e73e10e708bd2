"""Workspace tokens (docs/contract.md §16): owned by a team, bounded by their own role there,
outliving the
member who made them, ended by revocation; refused to anyone else, audited."""

from __future__ import annotations

from typing import Any

from django.test import Client

from skills_app.models import ApiToken, AuditEntry, Job, SkillRevision
from tests.api.conftest import Api, ApiFactory, error_code
from tests.factories import Env, publish, save

READ_WRITE_REVIEW = ["skills:read", "skills:write", "skills:review"]


def _create(api: Api, env: Env, **overrides: Any) -> Any:
    body = {
        "name": "ci-bot",
        "scopes": READ_WRITE_REVIEW,
        "owner": "workspace",
        "workspace": env.team.slug,
        "role": "member",
        **overrides,
    }
    return api.post("/v1/tokens", body)


def test_a_workspace_token_acts_with_its_role_and_outlives_its_creator(
    env: Env, api_for: ApiFactory
) -> None:
    publish(env.owner, env.team, slug="team-skill")
    creator = api_for(env.admin)
    made = _create(creator, env)
    assert made.status_code == 201, made.content
    assert (made.json()["owner"], made.json()["role"]) == ("workspace", "member")
    bot = Api(Client(), made.json()["token"])

    # Bounded by its role (member): it saves, but cannot approve despite skills:review.
    proposal = save(env.member, env.team, slug="other", intent="publish").revision
    denied = bot.post(f"/v1/revisions/{proposal.revision_id}/approve", {})
    assert denied.status_code == 403
    assert error_code(denied) == "PERMISSION_DENIED"
    workspaces = bot.get("/v1/workspaces").json()["results"]
    # Not its creator's personal workspace; its own role, not the creator's.
    assert [(w["slug"], w["role"]) for w in workspaces] == [(env.team.slug, "member")]

    # The creator leaves the team: the token keeps working, with its own role.
    removed = api_for(env.owner).delete(
        f"/v1/workspaces/{env.team.slug}/members/{env.admin.username}"
    )
    assert removed.status_code == 204
    recall = bot.get("/v1/recall", {"slug": "team-skill", "workspace": env.team.slug})
    assert recall.status_code == 200, recall.content
    saved = bot.post(
        "/v1/skills/save",
        {
            "workspace": env.team.slug,
            "slug": "bot-skill",
            "name": "Bot skill",
            "description": "Made by the team's token.",
            "instruction_body": "Do it.",
            "intent": "publish",
        },
    )
    assert saved.status_code == 201, saved.content
    assert saved.json()["state"] == "proposed"
    entry = AuditEntry.objects.filter(target_id=saved.json()["revision_id"]).get()
    assert entry.actor_label == "token:ci-bot"
    created = AuditEntry.objects.get(action="token.create", target_id=made.json()["token_id"])
    assert (created.workspace, created.data["owner"], created.data["role"]) == (
        env.team,
        "workspace",
        "member",
    )

    # Another admin of the team lists and revokes it; the next call is 401.
    owner = api_for(env.owner)
    listed = owner.get("/v1/tokens", {"workspace": env.team.slug}).json()["results"]
    assert [(t["token_id"], t["created_by"]) for t in listed] == [
        (made.json()["token_id"], env.admin.username)
    ]
    assert made.json()["token_id"] not in str(api_for(env.admin).get("/v1/tokens").json())
    assert owner.delete(f"/v1/tokens/{made.json()['token_id']}").status_code == 204
    after = bot.get("/v1/recall", {"slug": "team-skill", "workspace": env.team.slug})
    assert after.status_code == 401
    assert AuditEntry.objects.filter(action="token.revoke", workspace=env.team).exists()


def test_an_admin_workspace_token_may_approve(env: Env, api_for: ApiFactory) -> None:
    made = _create(api_for(env.owner), env, role="admin").json()
    proposal = save(env.member, env.team, intent="publish").revision
    approved = Api(Client(), made["token"]).post(
        f"/v1/revisions/{proposal.revision_id}/approve", {}
    )
    assert approved.status_code == 200, approved.content
    assert approved.json()["state"] == "published"


def test_who_may_make_and_end_a_workspace_token(env: Env, api_for: ApiFactory) -> None:
    cases = [
        (_create(api_for(env.member), env), 403, "PERMISSION_DENIED"),
        (_create(api_for(env.outsider), env), 404, "NOT_FOUND"),
        (_create(api_for(env.owner), env, role="owner"), 400, "VALIDATION_ERROR"),
        (_create(api_for(env.owner), env, workspace=None), 400, "VALIDATION_ERROR"),
        (
            _create(api_for(env.owner), env, workspace=env.personal.slug),
            400,
            "VALIDATION_ERROR",
        ),
        (
            _create(api_for(env.admin, scopes=["skills:read", "workspace:admin"]), env),
            403,
            "PERMISSION_DENIED",
        ),  # a token cannot mint scopes it does not have
        (api_for(env.member).get("/v1/tokens", {"workspace": env.team.slug}), 403, None),
    ]
    for response, status, code in cases:
        assert response.status_code == status, response.content
        if code:
            assert error_code(response) == code
    assert not ApiToken.objects.exclude(role="").exists()
    made = _create(api_for(env.admin), env).json()
    gone = api_for(env.member).delete(f"/v1/tokens/{made['token_id']}")
    assert gone.status_code == 404
    assert ApiToken.objects.get(token_id=made["token_id"]).revoked_at is None


def test_a_workspace_token_acts_as_itself_never_as_its_maker(env: Env, api_for: ApiFactory) -> None:
    """Issue 37 #5: a member-role workspace token read its maker's execution job, withdrew the
    maker's proposal and wrote comments shown as the maker's (docs/contract.md §16)."""
    made = _create(api_for(env.owner), env, scopes=[*READ_WRITE_REVIEW, "skills:execute"])
    bot = Api(Client(), made.json()["token"])
    publish(env.owner, env.team, slug="deploy")
    proposal = save(env.owner, env.team, slug="deploy", intent="publish", instruction_body="x")
    rev = proposal.revision.revision_id

    # Nobody's author: the maker's proposal is not the token's to withdraw.
    withdrawn = bot.post(f"/v1/revisions/{rev}/withdraw", {})
    assert withdrawn.status_code == 403, withdrawn.content
    assert SkillRevision.objects.get(revision_id=rev).state == "proposed"

    # Nor are the maker's jobs the token's to read; its own are.
    owners_run = Job.objects.create(
        workspace=env.team, kind=Job.Kind.EXECUTE, params={}, created_by=env.owner
    )
    assert bot.get(f"/v1/jobs/{owners_run.job_id}").status_code == 404

    # What it writes is attributed to the token.
    commented = bot.post(f"/v1/revisions/{rev}/comments", {"body": "Looks fine."})
    assert commented.status_code == 201, commented.content
    assert commented.json()["author"] == "token:ci-bot"
    saved = bot.post(
        "/v1/skills/save",
        {
            "workspace": env.team.slug,
            "slug": "bot-skill",
            "name": "Bot skill",
            "description": "Made by the team's token.",
            "instruction_body": "Do it.",
            "intent": "publish",
        },
    )
    assert saved.status_code == 201, saved.content
    own = saved.json()["revision_id"]
    detail = api_for(env.owner).get(f"/v1/revisions/{own}").json()
    assert detail["author"] == "token:ci-bot"
    entry = AuditEntry.objects.get(action="skills.revision.create", target_id=own)
    assert (entry.actor, entry.actor_label) == (None, "token:ci-bot")
    # Its own proposal it may withdraw, as any author.
    assert bot.post(f"/v1/revisions/{own}/withdraw", {}).status_code == 200
    # Its own jobs it reads; its maker (a member would not) does not own them.
    own_run = Job.objects.create(
        workspace=env.team,
        kind=Job.Kind.EXECUTE,
        params={},
        token=ApiToken.objects.get(token_id=made.json()["token_id"]),
    )
    assert bot.get(f"/v1/jobs/{own_run.job_id}").status_code == 200
