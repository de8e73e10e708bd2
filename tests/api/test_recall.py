"""GET /v1/recall — every field and status of docs/contract.md §5, level by level."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest

from skills_app.access import Actor
from skills_app.models import Skill
from skills_app.selectors.recall import recall
from skills_app.services.skills import revision_transition, skill_set_status
from tests.api.conftest import ApiFactory, error_code
from tests.factories import (
    Env,
    actor_for,
    component,
    let_authors_approve,
    make_team,
    personal_ws,
    publish,
    save,
)

RECALL = "/v1/recall"
ROOT_FIELDS = {
    "skill_id",
    "slug",
    "workspace",
    "name",
    "description",
    "revision_id",
    "revision_number",
    "state",
    "canonical_hash",
    "frontmatter",
    "instruction_body",
    "resolved_by",
    "labels",
    "resources",
    "scan",
    "approx_tokens",
}
RESOURCE_FIELDS = {
    "skill_id",
    "revision_id",
    "logical_path",
    "type",
    "content_hash",
    "size",
    "media_type",
    "encoding",
    "content",
}
SEARCH_FIELDS = {
    "skill_id",
    "slug",
    "workspace",
    "scope",
    "name",
    "description",
    "published_revision_number",
    "score",
    "approx_tokens",
}
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))


# --- Level 1 ------------------------------------------------------------------------------------


def test_level1_answers_every_field_of_the_published_revision(
    env: Env, api_for: ApiFactory
) -> None:
    rev = publish(
        env.owner,
        env.personal,
        slug="deploy",
        frontmatter={"license": "MIT", "metadata": {"team": "ops"}},
        components=(
            component("templates/t.md", "# T\n", "template"),
            component("assets/logo.png", PNG, "artifact"),
        ),
    ).revision
    response = api_for(env.owner).get(RECALL, {"slug": "deploy"})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"kind", "data"}
    assert body["kind"] == "root"
    data = body["data"]
    assert set(data) == ROOT_FIELDS
    assert data["skill_id"] == rev.skill.skill_id
    assert data["slug"] == "deploy"
    assert data["workspace"] == env.personal.slug
    assert data["name"] == "Deploy runbook"
    assert data["description"] == "How to deploy safely."
    assert data["revision_id"] == rev.revision_id
    assert data["revision_number"] == 1
    assert data["state"] == "published"
    assert data["canonical_hash"] == rev.canonical_hash
    assert data["frontmatter"] == {"license": "MIT", "metadata": {"team": "ops"}}
    assert data["instruction_body"] == "# Deploy\n\nStep one.\n"
    assert data["resolved_by"] == "published"
    assert data["resources"] == [
        {
            "logical_path": "assets/logo.png",
            "type": "artifact",
            "content_hash": rev.components.get(logical_path="assets/logo.png").content_hash,
            "size": len(PNG),
            "media_type": "image/png",
        },
        {
            "logical_path": "templates/t.md",
            "type": "template",
            "content_hash": rev.components.get(logical_path="templates/t.md").content_hash,
            "size": 4,
            "media_type": "text/markdown",
        },
    ]
    # The ETag stands for the whole answer: a digest of the bytes sent.
    assert response["ETag"] == f'"{hashlib.sha256(response.content).hexdigest()}"'


def test_level1_never_contains_component_bytes(env: Env, api_for: ApiFactory) -> None:
    publish(env.owner, env.personal, components=(component("r.md", "SECRET-BYTES"),))
    response = api_for(env.owner).get(RECALL, {"slug": "deploy"})
    assert response.status_code == 200
    assert b"SECRET-BYTES" not in response.content


def test_level1_falls_back_to_the_latest_revision_without_a_published_one(
    env: Env, api_for: ApiFactory
) -> None:
    save(env.owner, env.personal, instruction_body="one")
    second = save(env.owner, env.personal, instruction_body="two").revision
    data = api_for(env.owner).get(RECALL, {"slug": "deploy"}).json()["data"]
    assert data["resolved_by"] == "latest_fallback"
    assert data["revision_id"] == second.revision_id
    assert data["state"] == "draft"
    assert data["instruction_body"] == "two"


def test_level1_fallback_none_answers_no_published_revision(env: Env, api_for: ApiFactory) -> None:
    save(env.owner, env.personal)
    response = api_for(env.owner).get(RECALL, {"slug": "deploy", "fallback": "none"})
    assert response.status_code == 404
    assert error_code(response) == "NO_PUBLISHED_REVISION"


def test_level1_with_only_deprecated_revisions_answers_no_published_revision(
    env: Env, api_for: ApiFactory
) -> None:
    rev = publish(env.owner, env.personal).revision
    revision_transition(actor=actor_for(env.owner), revision=rev, action="deprecate")
    response = api_for(env.owner).get(RECALL, {"slug": "deploy"})
    assert response.status_code == 404
    assert error_code(response) == "NO_PUBLISHED_REVISION"


def test_level1_rejects_an_unknown_fallback(env: Env, api_for: ApiFactory) -> None:
    publish(env.owner, env.personal)
    response = api_for(env.owner).get(RECALL, {"slug": "deploy", "fallback": "oldest"})
    assert response.status_code == 400
    assert error_code(response) == "VALIDATION_ERROR"


def test_level1_pinned_revision_is_resolved_by_pinned(env: Env, api_for: ApiFactory) -> None:
    first = publish(env.owner, env.personal, instruction_body="v1").revision
    publish(env.owner, env.personal, instruction_body="v2")
    data = (
        api_for(env.owner)
        .get(RECALL, {"slug": "deploy", "revision_id": first.revision_id})
        .json()["data"]
    )
    assert data["resolved_by"] == "pinned"
    assert data["revision_id"] == first.revision_id
    assert data["instruction_body"] == "v1"
    assert data["state"] == "deprecated"


def test_level1_pinned_revision_of_another_skill_is_not_found(
    env: Env, api_for: ApiFactory
) -> None:
    other = publish(env.owner, env.personal, slug="other").revision
    publish(env.owner, env.personal, slug="deploy")
    response = api_for(env.owner).get(RECALL, {"slug": "deploy", "revision_id": other.revision_id})
    assert response.status_code == 404
    assert error_code(response) == "NOT_FOUND"


def test_level1_unknown_slug_and_bad_slug(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    missing = api.get(RECALL, {"slug": "nope"})
    assert missing.status_code == 404
    assert error_code(missing) == "NOT_FOUND"
    bad = api.get(RECALL, {"slug": "Not A Slug"})
    assert bad.status_code == 400
    assert error_code(bad) == "VALIDATION_ERROR"


def test_qualified_slug_and_workspace_parameter(env: Env, api_for: ApiFactory) -> None:
    mine = publish(env.owner, env.personal, instruction_body="personal").revision
    team = publish(env.owner, env.team, instruction_body="team").revision
    api = api_for(env.owner)
    by_qualified = api.get(RECALL, {"slug": f"{env.team.slug}/deploy"}).json()["data"]
    assert by_qualified["revision_id"] == team.revision_id
    assert by_qualified["workspace"] == env.team.slug
    by_param = api.get(RECALL, {"slug": "deploy", "workspace": env.personal.slug}).json()["data"]
    assert by_param["revision_id"] == mine.revision_id
    clash = api.get(RECALL, {"slug": f"{env.team.slug}/deploy", "workspace": env.personal.slug})
    assert clash.status_code == 400
    assert error_code(clash) == "VALIDATION_ERROR"


def test_empty_optional_parameters_mean_not_given(env: Env, api_for: ApiFactory) -> None:
    rev = publish(env.owner, env.personal).revision
    answer = api_for(env.owner).get(
        RECALL, {"slug": "deploy", "workspace": "", "revision_id": "", "fallback": ""}
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["data"]["revision_id"] == rev.revision_id
    assert answer.json()["data"]["resolved_by"] == "published"


def test_bare_slug_in_two_workspaces_is_ambiguous(env: Env, api_for: ApiFactory) -> None:
    a = publish(env.owner, env.personal).revision
    b = publish(env.owner, env.team).revision
    response = api_for(env.owner).get(RECALL, {"slug": "deploy"})
    assert response.status_code == 409
    assert error_code(response) == "AMBIGUOUS_SLUG"
    details = response.json()["error"]["details"]
    assert details["slug"] == "deploy"
    assert sorted(c["qualified_slug"] for c in details["candidates"]) == sorted(
        [f"{env.personal.slug}/deploy", f"{env.team.slug}/deploy"]
    )
    assert {c["skill_id"] for c in details["candidates"]} == {a.skill.skill_id, b.skill.skill_id}


def test_a_token_restricted_to_one_workspace_is_not_ambiguous(
    env: Env, api_for: ApiFactory
) -> None:
    publish(env.owner, env.personal)
    team = publish(env.owner, env.team).revision
    api = api_for(env.owner, workspace=env.team)
    data = api.get(RECALL, {"slug": "deploy"}).json()["data"]
    assert data["revision_id"] == team.revision_id


def test_archived_skill_is_left_out_by_slug_but_pinned_reads_work(
    env: Env, api_for: ApiFactory
) -> None:
    rev = publish(env.owner, env.personal, components=(component("r.md", "ref"),)).revision
    skill_set_status(actor=actor_for(env.owner), skill=rev.skill, status="archived")
    api = api_for(env.owner)
    by_slug = api.get(RECALL, {"slug": "deploy"})
    assert by_slug.status_code == 404
    assert error_code(by_slug) == "NOT_FOUND"
    pinned = api.get(RECALL, {"slug": "deploy", "revision_id": rev.revision_id})
    assert pinned.status_code == 200
    assert pinned.json()["data"]["resolved_by"] == "pinned"
    resource = api.get(
        RECALL, {"slug": "deploy", "revision_id": rev.revision_id, "resource": "r.md"}
    )
    assert resource.status_code == 200
    assert resource.json()["data"]["content"] == "ref"


def test_arguments_add_rendered_body(env: Env, api_for: ApiFactory) -> None:
    rev = publish(
        env.owner,
        env.personal,
        instruction_body="Deploy $1 to $env (${XMEMO_WORKSPACE}, $ARG_COUNT args): $ARGUMENTS",
        frontmatter={"argument-names": ["service", "env"]},
    ).revision
    api = api_for(env.owner)
    response = api.get(RECALL, {"slug": "deploy", "arguments": 'api "eu west"'})
    data = response.json()["data"]
    assert set(data) == ROOT_FIELDS | {"rendered_body"}
    assert data["rendered_body"] == (
        f'Deploy api to eu west ({env.personal.slug}, 2 args): api "eu west"'
    )
    assert data["instruction_body"].startswith("Deploy $1")
    # The ETag of a rendered answer differs from the plain one (it depends on the arguments).
    plain = api.get(RECALL, {"slug": "deploy"})
    assert plain.json()["data"]["canonical_hash"] == rev.canonical_hash
    assert response["ETag"] != plain["ETag"]
    assert "rendered_body" not in plain.json()["data"]


def test_etag_and_if_none_match_answer_304(env: Env, api_for: ApiFactory) -> None:
    publish(env.owner, env.personal, components=(component("r.md", "ref"),))
    api = api_for(env.owner)
    first = api.get(RECALL, {"slug": "deploy"})
    etag = first["ETag"]
    again = api.get(RECALL, {"slug": "deploy"}, **{"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    assert again["ETag"] == etag
    stale = api.get(RECALL, {"slug": "deploy"}, **{"If-None-Match": '"0000"'})
    assert stale.status_code == 200
    rev_id = first.json()["data"]["revision_id"]
    level2 = api.get(RECALL, {"slug": "deploy", "revision_id": rev_id, "resource": "r.md"})
    assert level2["ETag"] == f'"{hashlib.sha256(level2.content).hexdigest()}"'
    cached = api.get(
        RECALL,
        {"slug": "deploy", "revision_id": rev_id, "resource": "r.md"},
        **{"If-None-Match": f'W/"x", {level2["ETag"]}'},
    )
    assert cached.status_code == 304


def test_a_new_publish_changes_the_etag_of_level1(env: Env, api_for: ApiFactory) -> None:
    publish(env.owner, env.personal, instruction_body="v1")
    api = api_for(env.owner)
    etag = api.get(RECALL, {"slug": "deploy"})["ETag"]
    publish(env.owner, env.personal, instruction_body="v2")
    response = api.get(RECALL, {"slug": "deploy"}, **{"If-None-Match": etag})
    assert response.status_code == 200
    assert response.json()["data"]["instruction_body"] == "v2"


# --- pinning and team review ----------------------------------------------------------------------


def test_pinning_keeps_the_revision_read_at_level1(env: Env, api_for: ApiFactory) -> None:
    publish(
        env.owner,
        env.personal,
        instruction_body="v1",
        components=(component("refs/guide.md", "guide v1"),),
    )
    api = api_for(env.owner)
    root = api.get(RECALL, {"slug": "deploy"}).json()["data"]
    pinned_id = root["revision_id"]
    publish(
        env.owner,
        env.personal,
        instruction_body="v2",
        components=(component("refs/guide.md", "guide v2"),),
    )
    resource = api.get(
        RECALL, {"slug": "deploy", "revision_id": pinned_id, "resource": "refs/guide.md"}
    ).json()["data"]
    assert resource["revision_id"] == pinned_id
    assert resource["content"] == "guide v1"
    assert resource["content_hash"] == root["resources"][0]["content_hash"]
    fresh = api.get(RECALL, {"slug": "deploy"}).json()["data"]
    assert fresh["revision_id"] != pinned_id
    assert fresh["instruction_body"] == "v2"
    assert fresh["resolved_by"] == "published"
    new_resource = api.get(
        RECALL,
        {"slug": "deploy", "revision_id": fresh["revision_id"], "resource": "refs/guide.md"},
    ).json()["data"]
    assert new_resource["content"] == "guide v2"


def test_team_review_protects_what_agents_get(env: Env, api_for: ApiFactory) -> None:
    live = publish(env.member, env.team, instruction_body="live").revision
    agent = api_for(env.member2, scopes=["skills:read"])
    proposed = save(env.member, env.team, instruction_body="proposed", intent="publish").revision
    assert proposed.state == "proposed"
    data = agent.get(RECALL, {"slug": "deploy"}).json()["data"]
    assert (data["revision_id"], data["instruction_body"]) == (live.revision_id, "live")
    revision_transition(
        actor=actor_for(env.admin), revision=proposed, action="reject", comment="Not yet."
    )
    data = agent.get(RECALL, {"slug": "deploy"}).json()["data"]
    assert data["revision_id"] == live.revision_id
    proposed.refresh_from_db()
    revision_transition(actor=actor_for(env.member), revision=proposed, action="propose")
    revision_transition(actor=actor_for(env.admin), revision=proposed, action="approve")
    data = agent.get(RECALL, {"slug": "deploy"}).json()["data"]
    assert (data["revision_id"], data["instruction_body"]) == (proposed.revision_id, "proposed")
    assert data["resolved_by"] == "published"


# --- Level 2 --------------------------------------------------------------------------------------


def test_level2_answers_text_as_utf8_and_binary_as_base64(env: Env, api_for: ApiFactory) -> None:
    rev = publish(
        env.owner,
        env.personal,
        components=(
            component("refs/ü.md", "Grüße\n"),
            component("assets/logo.png", PNG, "artifact"),
        ),
    ).revision
    api = api_for(env.owner)
    text = api.get(
        RECALL, {"slug": "deploy", "revision_id": rev.revision_id, "resource": "refs/ü.md"}
    )
    assert text.status_code == 200
    body = text.json()
    assert body["kind"] == "resource"
    data = body["data"]
    assert set(data) == RESOURCE_FIELDS
    comp = rev.components.get(logical_path="refs/ü.md")
    assert data == {
        "skill_id": rev.skill.skill_id,
        "revision_id": rev.revision_id,
        "logical_path": "refs/ü.md",
        "type": "reference",
        "content_hash": comp.content_hash,
        "size": len("Grüße\n".encode()),
        "media_type": "text/markdown",
        "encoding": "utf-8",
        "content": "Grüße\n",
    }
    binary = api.get(
        RECALL, {"slug": "deploy", "revision_id": rev.revision_id, "resource": "assets/logo.png"}
    ).json()["data"]
    assert binary["encoding"] == "base64"
    assert base64.b64decode(binary["content"]) == PNG
    assert binary["media_type"] == "image/png"
    assert binary["type"] == "artifact"


def test_level2_requires_a_revision_id(env: Env, api_for: ApiFactory) -> None:
    publish(env.owner, env.personal, components=(component("r.md", "x"),))
    response = api_for(env.owner).get(RECALL, {"slug": "deploy", "resource": "r.md"})
    assert response.status_code == 400
    assert error_code(response) == "REVISION_ID_REQUIRED"


def test_level2_unknown_resource_or_revision_is_not_found(env: Env, api_for: ApiFactory) -> None:
    rev = publish(env.owner, env.personal, components=(component("r.md", "x"),)).revision
    api = api_for(env.owner)
    missing = api.get(RECALL, {"slug": "deploy", "revision_id": rev.revision_id, "resource": "no"})
    assert missing.status_code == 404
    assert error_code(missing) == "NOT_FOUND"
    bad_rev = api.get(RECALL, {"slug": "deploy", "revision_id": "rev_nope", "resource": "r.md"})
    assert bad_rev.status_code == 404
    wrong_slug = api.get(
        RECALL, {"slug": "other", "revision_id": rev.revision_id, "resource": "r.md"}
    )
    assert wrong_slug.status_code == 404


# --- Level 0 --------------------------------------------------------------------------------------


def test_level0_answers_light_descriptors(env: Env, api_for: ApiFactory) -> None:
    rev = publish(
        env.owner,
        env.personal,
        slug="deploy",
        name="Deploy runbook",
        instruction_body="Kubernetes rollout with canary BODYONLY",
        components=(component("r.md", "COMPONENTONLY"),),
    ).revision
    response = api_for(env.owner).get(RECALL, {"query": "deploy"})
    assert response.status_code == 200
    body = response.json()
    assert body["kind"] == "search"
    assert set(body["data"]) == {"results"}
    [hit] = body["data"]["results"]
    assert set(hit) == SEARCH_FIELDS
    assert hit["skill_id"] == rev.skill.skill_id
    assert hit["slug"] == "deploy"
    assert hit["workspace"] == env.personal.slug
    assert hit["scope"] == "personal"
    assert hit["name"] == "Deploy runbook"
    assert hit["description"] == "How to deploy safely."
    assert hit["published_revision_number"] == 1
    assert isinstance(hit["score"], float)
    assert hit["score"] > 0
    assert b"BODYONLY" not in response.content
    assert b"COMPONENTONLY" not in response.content


def test_level0_searches_the_body_and_reports_team_scope(env: Env, api_for: ApiFactory) -> None:
    publish(env.owner, env.team, slug="canary", instruction_body="Use a kubernetes canary.")
    save(env.owner, env.personal, slug="draft", instruction_body="A kubernetes draft.")
    results = api_for(env.owner).get(RECALL, {"query": "kubernetes"}).json()["data"]["results"]
    assert sorted((r["slug"], r["scope"], r["published_revision_number"]) for r in results) == [
        ("canary", "team", 1),
        ("draft", "personal", None),
    ]


def test_level0_ranks_name_over_description_over_body(env: Env, api_for: ApiFactory) -> None:
    save(
        env.owner,
        env.personal,
        slug="in-body",
        name="Alpha",
        description="Beta.",
        instruction_body="All about the zebra crossing.",
    )
    save(
        env.owner,
        env.personal,
        slug="in-name",
        name="Zebra crossing",
        description="Gamma.",
        instruction_body="Nothing here.",
    )
    save(
        env.owner,
        env.personal,
        slug="in-description",
        name="Delta",
        description="Zebra crossing rules.",
        instruction_body="Nothing here.",
    )
    results = api_for(env.owner).get(RECALL, {"query": "zebra"}).json()["data"]["results"]
    assert [r["slug"] for r in results] == ["in-name", "in-description", "in-body"]
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    assert scores[0] > scores[-1]


def test_level0_limit(env: Env, api_for: ApiFactory) -> None:
    for i in range(4):
        save(env.owner, env.personal, slug=f"deploy-{i}")
    api = api_for(env.owner)
    assert len(api.get(RECALL, {"query": "deploy"}).json()["data"]["results"]) == 4
    assert len(api.get(RECALL, {"query": "deploy", "limit": 2}).json()["data"]["results"]) == 2
    for bad in ("0", "51", "x"):
        response = api.get(RECALL, {"query": "deploy", "limit": bad})
        assert response.status_code == 400, bad
        assert error_code(response) == "VALIDATION_ERROR"


def test_level0_leaves_out_archived_and_people_only_skills_for_tokens(
    env: Env, api_for: ApiFactory
) -> None:
    save(env.owner, env.personal, slug="deploy-visible")
    save(env.owner, env.personal, slug="deploy-people", frontmatter={"invoke": {"model": False}})
    archived = save(env.owner, env.personal, slug="deploy-archived").revision
    skill_set_status(actor=actor_for(env.owner), skill=archived.skill, status="archived")
    results = api_for(env.owner).get(RECALL, {"query": "deploy"}).json()["data"]["results"]
    assert [r["slug"] for r in results] == ["deploy-visible"]
    # People (the console, no token) still find the people-only skill.
    console: Any = recall(actor=Actor(user=env.owner, via="console"), query="deploy")
    assert {r["slug"] for r in console["data"]["results"]} == {"deploy-visible", "deploy-people"}


def test_level0_workspace_filter_and_other_tenants(env: Env, api_for: ApiFactory) -> None:
    save(env.owner, env.personal, slug="deploy-a")
    publish(env.owner, env.team, slug="deploy-b")
    stranger_team = make_team(env.outsider)
    let_authors_approve(stranger_team)  # a team of one
    publish(env.outsider, stranger_team, slug="deploy-c")
    save(env.outsider, personal_ws(env.outsider), slug="deploy-d")
    api = api_for(env.owner)
    all_hits = api.get(RECALL, {"query": "deploy"}).json()["data"]["results"]
    assert {r["slug"] for r in all_hits} == {"deploy-a", "deploy-b"}
    team_hits = api.get(RECALL, {"query": "deploy", "workspace": env.team.slug}).json()
    assert [r["slug"] for r in team_hits["data"]["results"]] == ["deploy-b"]
    foreign = api.get(RECALL, {"query": "deploy", "workspace": stranger_team.slug})
    assert foreign.status_code == 404


def test_level0_empty_query_and_conflicting_levels(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    for params in ({"query": "   "}, {"query": "x", "slug": "deploy"}, {}):
        response = api.get(RECALL, params)
        assert response.status_code == 400, params
        assert error_code(response) == "VALIDATION_ERROR"


# --- feature switch, scopes, methods --------------------------------------------------------


def test_feature_disabled_workspace_answers_403(env: Env, api_for: ApiFactory) -> None:
    publish(env.owner, env.team)
    env.team.cloud_skills_enabled = False
    env.team.save()
    api = api_for(env.owner)
    response = api.get(RECALL, {"slug": f"{env.team.slug}/deploy"})
    assert response.status_code == 403
    assert error_code(response) == "FEATURE_DISABLED"
    search = api.get(RECALL, {"query": "deploy", "workspace": env.team.slug})
    assert search.status_code == 403
    assert error_code(search) == "FEATURE_DISABLED"
    assert Skill.objects.filter(workspace=env.team).exists()


def test_recall_needs_the_read_scope(env: Env, api_for: ApiFactory) -> None:
    publish(env.owner, env.personal)
    response = api_for(env.owner, scopes=["skills:write"]).get(RECALL, {"slug": "deploy"})
    assert response.status_code == 403
    assert error_code(response) == "PERMISSION_DENIED"


def test_recall_refuses_other_methods(env: Env, api_for: ApiFactory) -> None:
    response = api_for(env.owner).post(RECALL, {})
    assert response.status_code == 405
    assert error_code(response) == "METHOD_NOT_ALLOWED"
    assert "GET" in response["Allow"]


@pytest.mark.parametrize("param", ["slug", "revision_id", "query", "workspace"])
def test_nul_bytes_in_parameters_are_a_validation_error(
    env: Env, api_for: ApiFactory, param: str
) -> None:
    params = {"slug": "deploy", param: "a\x00b"} if param != "query" else {"query": "a\x00b"}
    response = api_for(env.owner).get(RECALL, params)
    assert response.status_code == 400
    assert error_code(response) == "VALIDATION_ERROR"


def test_rest_answers_exactly_what_the_selector_answers(env: Env, api_for: ApiFactory) -> None:
    """The MCP tool calls the selector; REST must send the same JSON."""
    rev = publish(env.owner, env.personal, components=(component("r.md", "x"),)).revision
    actor = Actor(user=env.owner, via="mcp")
    api = api_for(env.owner)
    cases: list[dict[str, Any]] = [
        {"query": "deploy"},
        {"slug": "deploy"},
        {"slug": "deploy", "arguments": "a b"},
        {"slug": "deploy", "revision_id": rev.revision_id, "resource": "r.md"},
    ]
    for params in cases:
        assert api.get(RECALL, params).json() == recall(actor=actor, **params), params
