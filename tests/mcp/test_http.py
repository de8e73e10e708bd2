"""MCP over streamable HTTP, served by uvicorn with the rest of the app, driven by the SDK client.

Every answer is compared with what the REST API of the same live server answers for the same
token and data: the MCP tools must be REST's twins (docs/contract.md §12).
"""

from __future__ import annotations

import base64
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types
import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.utils import timezone
from mcp import Client
from mcp.shared.exceptions import MCPError

from skills_app.access import Actor
from skills_app.mcp_profiles import tool_spec
from skills_app.models import ApiToken, SkillRevision
from skills_app.services.accounts import token_revoke
from tests.factories import (
    component,
    let_authors_approve,
    make_team,
    make_token,
    make_user,
    personal_ws,
    publish,
    save,
)
from tests.mcp.conftest import bearer, rest, tool_answer, with_mcp

pytestmark = pytest.mark.django_db(transaction=True)

RECALL = "recall_cloud_skill"
SAVE = "save_cloud_skill"
OUTCOME = "report_skill_outcome"
MODES = ["auto", "legacy"]  # the 2026-07-28 per-request protocol, and the initialize handshake
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
PUBLIC_PROFILES = ["chatgpt-public", "generic-public", "claude-code"]


def _token(user: User, scopes: list[str] | None = None, **kwargs: Any) -> str:
    return make_token(user, scopes or ["skills:read", "skills:write"], **kwargs)[1]


def _library(user: User) -> dict[str, Any]:
    """A personal and a team skill, a draft-only skill and a slug in two workspaces."""
    ws = personal_ws(user)
    team = make_team(user, slug=f"{user.username}-team")
    let_authors_approve(team)  # a team of one
    first = publish(user, ws, slug="deploy", instruction_body="# Deploy v1\n").revision
    latest = publish(
        user,
        ws,
        slug="deploy",
        instruction_body="# Deploy $1\n\nRun $ARGUMENTS in ${XMEMO_WORKSPACE}.\n",
        frontmatter={"license": "MIT", "argument-names": ["target"]},
        components=(
            component("references/guide.md", "# Guide\n\nRead me.\n"),
            component("assets/logo.png", PNG, "artifact"),
        ),
    ).revision
    save(user, ws, slug="draft-only", name="Draft only", description="Not published yet.")
    publish(user, ws, slug="shared", name="Shared personal")
    team_rev = publish(user, team, slug="shared", name="Shared team").revision
    return {"ws": ws, "team": team, "first": first, "latest": latest, "team_rev": team_rev}


def _payload(workspace: str, slug: Any = "release", **overrides: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "workspace": workspace,
        "slug": slug,
        "name": "Release",
        "description": "How to ship a release.",
        "instruction_body": "# Release\n\nTag, build, ship.\n",
        "frontmatter": {"license": "MIT"},
        "components": [
            {"logical_path": "scripts/ship.sh", "type": "script", "content": "echo ship\n"},
            {
                "logical_path": "assets/logo.png",
                "type": "artifact",
                "content": base64.b64encode(PNG).decode("ascii"),
                "encoding": "base64",
            },
        ],
        "intent": "publish",
        "message": "first cut",
    }
    payload.update(overrides)
    return payload


async def _calls(
    client: Client, name: str, cases: list[dict[str, Any]]
) -> list[types.CallToolResult]:
    return [await client.call_tool(name, args) for args in cases]


def _assert_same(name: str, result: types.CallToolResult, response: httpx.Response) -> None:
    """The MCP result carries exactly the REST body (as text, and as structured content where
    that fits the tool's outputSchema), a failure as a tool error."""
    body = response.json()
    assert tool_answer(name, result) == body
    assert result.is_error == (response.status_code >= 400), (response.status_code, body)


def _error(result: types.CallToolResult) -> dict[str, Any]:
    """A tool error's envelope, from its text content (SPEC §18)."""
    assert result.is_error
    assert isinstance(result.content[0], types.TextContent)
    error: dict[str, Any] = json.loads(result.content[0].text)["error"]
    return error


def _assert_recall_like_rest(
    url: str, secret: str, cases: list[dict[str, Any]], mode: str = "auto"
) -> list[types.CallToolResult]:
    results = with_mcp(url, secret, lambda client: _calls(client, RECALL, cases), mode)
    for args, result in zip(cases, results, strict=True):
        _assert_same(RECALL, result, rest(url, secret, "GET", "/v1/recall", params=args))
    return results


def _revision_count() -> int:
    return SkillRevision.objects.count()


# --- what an ordinary-full token sees and gets ----------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_ordinary_full_lists_exactly_its_tools_with_their_contract_schemas(
    live_url: str, mode: str
) -> None:
    secret = _token(make_user())
    tools = with_mcp(live_url, secret, lambda client: client.list_tools(), mode).tools
    assert [tool.name for tool in tools] == [RECALL, SAVE, OUTCOME]
    for tool in tools:
        spec = tool_spec(tool.name)
        assert tool.input_schema == spec["input_schema"]
        assert tool.description == spec["description"]
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is (spec["access"] == "read")


@pytest.mark.parametrize("mode", MODES)
def test_recall_levels_answer_exactly_what_rest_answers(live_url: str, mode: str) -> None:
    user = make_user()
    lib = _library(user)
    latest = lib["latest"].revision_id
    results = _assert_recall_like_rest(
        live_url,
        _token(user),
        [
            {"query": "deploy"},
            {"query": "shared", "workspace": lib["team"].slug, "limit": 1},
            {"slug": "deploy"},
            {"slug": f"{user.username}/deploy", "arguments": "prod 'blue green'"},
            {"slug": "deploy", "revision_id": lib["first"].revision_id},
            {"slug": "draft-only"},
            {"slug": "deploy", "revision_id": latest, "resource": "references/guide.md"},
            {"slug": "deploy", "revision_id": latest, "resource": "assets/logo.png"},
        ],
        mode,
    )
    kinds = [result.structured_content["kind"] for result in results]
    assert kinds == ["search", "search", "root", "root", "root", "root", "resource", "resource"]
    assert results[0].structured_content["data"]["results"][0]["slug"] == "deploy"
    assert results[3].structured_content["data"]["rendered_body"].startswith("# Deploy prod\n")
    assert results[4].structured_content["data"]["resolved_by"] == "pinned"
    assert results[5].structured_content["data"]["resolved_by"] == "latest_fallback"
    binary = results[7].structured_content["data"]
    assert (binary["encoding"], base64.b64decode(binary["content"])) == ("base64", PNG)


@pytest.mark.parametrize("mode", MODES)
def test_recall_errors_are_tool_errors_with_the_rest_envelope(live_url: str, mode: str) -> None:
    user = make_user()
    lib = _library(user)
    results = _assert_recall_like_rest(
        live_url,
        _token(user),
        [
            {"slug": "deploy", "resource": "references/guide.md"},
            {"slug": "no-such-skill"},
            {"slug": "shared"},
            {"slug": "draft-only", "fallback": "none"},
            {"slug": "deploy", "revision_id": lib["latest"].revision_id, "resource": "nope.md"},
            {"query": "   "},
        ],
        mode,
    )
    assert [_error(result)["code"] for result in results] == [
        "REVISION_ID_REQUIRED",
        "NOT_FOUND",
        "AMBIGUOUS_SLUG",
        "NO_PUBLISHED_REVISION",
        "NOT_FOUND",
        "VALIDATION_ERROR",
    ]


def test_an_outcome_reported_over_mcp_counts_like_rest(live_url: str) -> None:
    """docs/contract.md §22: report_skill_outcome answers what REST answers, counted once per
    token per revision per day; a bad outcome is the REST envelope as a tool error."""
    user = make_user()
    secret = _token(user)
    saved = rest(live_url, secret, "POST", "/v1/skills/save", json=_payload(user.username)).json()
    rid = saved["revision_id"]

    async def calls(client: Client) -> list[types.CallToolResult]:
        return [
            await client.call_tool(OUTCOME, {"revision_id": rid, "outcome": "success"}),
            await client.call_tool(OUTCOME, {"revision_id": rid, "outcome": "failure"}),
            await client.call_tool(OUTCOME, {"revision_id": rid, "outcome": "great"}),
        ]

    first, second, bad = with_mcp(live_url, secret, calls)
    assert first.structured_content == {"revision_id": rid, "outcome": "success", "accepted": True}
    assert not second.is_error
    assert _error(bad)["code"] == "VALIDATION_ERROR"
    usage = rest(live_url, secret, "GET", f"/v1/skills/{saved['skill_id']}/usage").json()
    assert usage["by_revision"][0]["outcomes"] == {
        "success": 1,
        "partial": 0,
        "failure": 0,
        "rate": 1.0,
    }


@pytest.mark.parametrize("mode", MODES)
def test_save_creates_a_revision_visible_over_rest(live_url: str, mode: str) -> None:
    user = make_user()
    secret = _token(user)
    payload = _payload(user.username)
    result = with_mcp(live_url, secret, lambda client: client.call_tool(SAVE, payload), mode)
    assert not result.is_error, result.structured_content
    answer = result.structured_content
    assert json.loads(result.content[0].text) == answer
    assert set(answer) == {
        "skill_id",
        "revision_id",
        "revision_number",
        "state",
        "canonical_hash",
        "created",
        "warnings",
    }
    assert (answer["revision_number"], answer["state"], answer["created"]) == (1, "published", True)

    detail = rest(live_url, secret, "GET", f"/v1/revisions/{answer['revision_id']}")
    assert detail.status_code == 200
    revision = detail.json()
    assert revision["source"] == "mcp"
    assert revision["canonical_hash"] == answer["canonical_hash"]
    assert revision["message"] == "first cut"
    assert sorted(c["logical_path"] for c in revision["components"]) == [
        "assets/logo.png",
        "scripts/ship.sh",
    ]
    root = rest(live_url, secret, "GET", "/v1/recall", params={"slug": "release"}).json()
    assert root["data"]["revision_id"] == answer["revision_id"]
    png = rest(
        live_url, secret, "GET", f"/v1/revisions/{answer['revision_id']}/components/assets/logo.png"
    )
    assert png.content == PNG

    # REST's save of the same content finds the very revision MCP stored: one save path.
    again = rest(live_url, secret, "POST", "/v1/skills/save", json=payload)
    assert again.status_code == 200
    assert again.json() == {**answer, "created": False}
    assert _revision_count() == 1


def test_save_errors_are_the_rest_errors_and_store_nothing(live_url: str) -> None:
    user = make_user()
    secret = _token(user)
    base = save(user, personal_ws(user), slug="release").revision
    cases = [
        _payload(user.username, base_revision_id="rev_stale"),
        _payload(user.username, slug="Not A Slug"),
        _payload(user.username, instruction_body="x" * 65_537),
        _payload(
            user.username,
            components=[{"logical_path": "../x", "type": "reference", "content": "x"}],
        ),
        _payload("someone-elses"),
    ]
    before = _revision_count()
    results = with_mcp(live_url, secret, lambda client: _calls(client, SAVE, cases))
    for payload, result in zip(cases, results, strict=True):
        _assert_same(SAVE, result, rest(live_url, secret, "POST", "/v1/skills/save", json=payload))
    assert [_error(result)["code"] for result in results] == [
        "CONFLICT",
        "VALIDATION_ERROR",
        "BODY_TOO_LARGE",
        "INVALID_PATH",
        "NOT_FOUND",
    ]
    assert _error(results[0])["details"]["latest_revision_id"] == base.revision_id
    assert _revision_count() == before


def _without(payload: dict[str, Any], field: str) -> dict[str, Any]:
    return {key: value for key, value in payload.items() if key != field}


def test_bad_save_payloads_are_refused_alike_by_both_doors(live_url: str) -> None:
    """One validator of the save payload: REST and MCP answer every malformed payload with the
    same envelope, byte for byte, and store nothing."""
    user = make_user()
    secret = _token(user)
    good = _payload(user.username)
    component = {"logical_path": "a.md", "type": "reference", "content": "x"}
    cases = [
        _without(good, "instruction_body"),
        _payload(user.username, slug=5),
        _payload(user.username, colour="blue"),
        _payload(user.username, frontmatter=["not", "an", "object"]),
        _payload(user.username, components={"a.md": "x"}),
        _payload(user.username, components=["a.md"]),
        _payload(user.username, components=[{**component, "type": "picture"}]),
        _payload(user.username, components=[_without(component, "content")]),
        _payload(user.username, components=[{**component, "encoding": "rot13"}]),
        _payload(user.username, components=[{**component, "encoding": "base64", "content": "%"}]),
        _payload(user.username, components=[{**component, "size": 1}]),
        _payload(user.username, intent="yolo"),
        _payload(user.username, message=7),
        _payload(user.username, frontmatter={"license": "M\x00IT"}),
    ]
    before = _revision_count()
    results = with_mcp(live_url, secret, lambda client: _calls(client, SAVE, cases))
    for payload, result in zip(cases, results, strict=True):
        _assert_same(SAVE, result, rest(live_url, secret, "POST", "/v1/skills/save", json=payload))
    assert {_error(result)["code"] for result in results} == {"VALIDATION_ERROR"}
    assert _revision_count() == before


# --- client profiles and the contract -------------------------------------------------------------


@pytest.mark.parametrize("profile", PUBLIC_PROFILES)
def test_public_profiles_see_no_tool_and_calling_one_fails(live_url: str, profile: str) -> None:
    user = make_user()
    publish(user, personal_ws(user), slug="deploy")
    secret = _token(user, profile=profile)
    before = _revision_count()

    async def body(client: Client) -> tuple[list[types.Tool], list[str]]:
        tools = (await client.list_tools()).tools
        refusals = []
        for name, args in (
            (RECALL, {"slug": "deploy"}),
            (SAVE, _payload(user.username)),
            ("execute_cloud_skill", {"revision_id": "rev_x", "resource": "s.sh"}),
        ):
            with pytest.raises(MCPError) as refused:
                await client.call_tool(name, args)
            refusals.append(refused.value.message)
        return tools, refusals

    tools, refusals = with_mcp(live_url, secret, body)
    assert tools == []
    assert refusals == [
        f"Unknown tool: {RECALL}",
        f"Unknown tool: {SAVE}",
        "Unknown tool: execute_cloud_skill",
    ]
    assert _revision_count() == before


def test_the_contract_file_decides_what_is_exposed(
    live_url: str, tmp_path: Path, settings: Any
) -> None:
    user = make_user()
    publish(user, personal_ws(user), slug="deploy")
    full, claude = _token(user), _token(user, profile="claude-code")
    edited = json.loads(Path(settings.XMEMO_MCP_CONTRACT).read_text(encoding="utf-8"))
    edited["profiles"]["claude-code"] = [RECALL]
    edited["profiles"]["ordinary-full"] = ["execute_cloud_skill", SAVE, "not_a_tool"]
    path = tmp_path / "contract.json"
    path.write_text(json.dumps(edited), encoding="utf-8")
    settings.XMEMO_MCP_CONTRACT = path

    async def names(client: Client) -> list[str]:
        return [tool.name for tool in (await client.list_tools()).tools]

    assert with_mcp(live_url, claude, names) == [RECALL]
    recalled = with_mcp(live_url, claude, lambda c: c.call_tool(RECALL, {"slug": "deploy"}))
    assert recalled.structured_content["kind"] == "root"
    # execute_cloud_skill has no MCP implementation and an unknown name has no contract entry.
    assert with_mcp(live_url, full, names) == [SAVE]


# --- authentication and scopes --------------------------------------------------------------------


def _expired(user: User) -> str:
    token, secret = make_token(user, ["skills:read", "skills:write"])
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    return secret


def _revoked(user: User) -> str:
    token, secret = make_token(user, ["skills:read", "skills:write"])
    token_revoke(actor=Actor(user=user, via="cli"), token=token)
    return secret


@pytest.mark.parametrize(
    "credential",
    [
        lambda user: None,
        lambda user: "not-an-xmemo-token",
        lambda user: "xm_" + "0" * 43,
        _revoked,
        _expired,
    ],
    ids=["missing", "foreign", "unknown", "revoked", "expired"],
)
def test_requests_without_a_valid_token_are_refused_and_store_nothing(
    live_url: str, credential: Any
) -> None:
    user = make_user()
    secret = credential(user)
    raw = httpx.post(
        f"{live_url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={**bearer(secret), "Accept": "application/json, text/event-stream"},
    )
    assert raw.status_code == 401
    assert raw.headers["WWW-Authenticate"].startswith("Bearer")
    assert raw.json()["error"]["code"] == "AUTHENTICATION_REQUIRED"
    with pytest.raises(BaseExceptionGroup) as refused:
        with_mcp(live_url, secret, lambda client: client.call_tool(SAVE, _payload(user.username)))
    assert refused.group_contains(MCPError)
    assert _revision_count() == 0


def test_a_token_revoked_during_a_session_is_refused_from_then_on(live_url: str) -> None:
    user = make_user()
    token, secret = make_token(user, ["skills:read", "skills:write"])

    async def body(client: Client) -> types.CallToolResult:
        first = await client.call_tool(SAVE, _payload(user.username))
        await sync_to_async(token_revoke)(actor=Actor(user=user, via="cli"), token=token)
        await client.call_tool(SAVE, _payload(user.username, slug="second"))
        return first

    with pytest.raises(BaseExceptionGroup) as refused:
        with_mcp(live_url, secret, body)
    assert refused.group_contains(MCPError)
    assert list(SkillRevision.objects.values_list("skill__slug", flat=True)) == ["release"]


def test_save_without_skills_write_is_refused_like_rest(live_url: str) -> None:
    user = make_user()
    publish(user, personal_ws(user), slug="deploy")
    secret = _token(user, ["skills:read"])
    payload = _payload(user.username)
    before = _revision_count()

    async def body(client: Client) -> tuple[list[str], types.CallToolResult, types.CallToolResult]:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        return (
            tools,
            await client.call_tool(SAVE, payload),
            await client.call_tool(RECALL, {"slug": "deploy"}),
        )

    tools, saved, recalled = with_mcp(live_url, secret, body)
    assert tools == [
        RECALL,
        SAVE,
        OUTCOME,
    ]  # the profile decides what is listed; the scope what succeeds
    _assert_same(SAVE, saved, rest(live_url, secret, "POST", "/v1/skills/save", json=payload))
    assert _error(saved)["code"] == "PERMISSION_DENIED"
    assert not recalled.is_error
    assert _revision_count() == before


# --- tenant isolation -----------------------------------------------------------------------------


def test_a_stranger_gets_exactly_what_rest_gives_a_stranger(live_url: str) -> None:
    owner, stranger = make_user(), make_user()
    lib = _library(owner)
    secret = _token(stranger)
    latest = lib["latest"].revision_id
    results = _assert_recall_like_rest(
        live_url,
        secret,
        [
            {"query": "deploy"},
            {"slug": "deploy"},
            {"slug": f"{owner.username}/deploy"},
            {"slug": "deploy", "revision_id": latest},
            {"slug": "deploy", "revision_id": latest, "resource": "references/guide.md"},
            {"query": "shared", "workspace": lib["team"].slug},
        ],
    )
    assert results[0].structured_content == {"kind": "search", "data": {"results": []}}
    assert all(_error(r)["code"] == "NOT_FOUND" for r in results[1:])
    payload = _payload(owner.username)
    before = _revision_count()
    saved = with_mcp(live_url, secret, lambda client: client.call_tool(SAVE, payload))
    _assert_same(SAVE, saved, rest(live_url, secret, "POST", "/v1/skills/save", json=payload))
    assert _error(saved)["code"] == "NOT_FOUND"
    assert _revision_count() == before


def test_a_workspace_restricted_token_cannot_reach_its_users_other_workspaces(
    live_url: str,
) -> None:
    user = make_user()
    lib = _library(user)
    secret = _token(user, workspace=lib["ws"])
    team = lib["team"].slug
    results = _assert_recall_like_rest(
        live_url,
        secret,
        [
            {"query": "shared"},
            {"slug": f"{team}/shared"},
            {"slug": "shared", "revision_id": lib["team_rev"].revision_id},
            {"slug": "shared"},
        ],
    )
    assert [hit["workspace"] for hit in results[0].structured_content["data"]["results"]] == [
        user.username
    ]
    assert [_error(r)["code"] for r in results[1:3]] == ["NOT_FOUND"] * 2
    assert results[3].structured_content["data"]["workspace"] == user.username
    payload = _payload(team)
    before = _revision_count()
    saved = with_mcp(live_url, secret, lambda client: client.call_tool(SAVE, payload))
    _assert_same(SAVE, saved, rest(live_url, secret, "POST", "/v1/skills/save", json=payload))
    assert _error(saved)["code"] == "NOT_FOUND"
    assert _revision_count() == before


# --- the HTTP door --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "attacker.example"}, 421),
        ({"Origin": "http://attacker.example"}, 403),
        ({"Origin": "http://localhost:3000"}, 401),
    ],
    ids=["foreign-host", "foreign-origin", "loopback-origin"],
)
def test_the_host_and_origin_allowlist_is_checked_before_the_token(
    live_url: str, headers: dict[str, str], status: int
) -> None:
    response = httpx.post(f"{live_url}/mcp", json={}, headers=headers)
    assert response.status_code == status
