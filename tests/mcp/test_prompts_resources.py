"""Skills where agents look for them (docs/contract.md §18), through the ``mcp`` SDK's own client
against the live server: commands as prompts, components as resources, per profile."""

from __future__ import annotations

import base64
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from skills_app.services.skills import revision_transition
from tests.factories import (
    actor_for,
    component,
    let_authors_approve,
    make_team,
    make_user,
    personal_ws,
    publish,
    save,
)
from tests.mcp.conftest import rest, with_mcp
from tests.mcp.test_http import PNG, _token

pytestmark = pytest.mark.django_db(transaction=True)

COMMAND = {"invoke": {"user": True}, "argument-names": ["target", "mode"]}
BODY = "# Ship $target\n\nMode: $mode. All: $ARGUMENTS ($ARG_COUNT) in ${XMEMO_WORKSPACE}.\n"


def _level1(url: str, secret: str, **params: str) -> dict[str, Any]:
    response = rest(url, secret, "GET", "/v1/recall", params=params)
    assert response.status_code == 200, response.content
    data: dict[str, Any] = response.json()["data"]
    return data


def _text(result: types.GetPromptResult) -> str:
    assert len(result.messages) == 1
    message = result.messages[0]
    assert message.role == "user"
    assert isinstance(message.content, types.TextContent)
    return message.content.text


def test_commands_are_prompts_with_their_arguments_and_level1_text(live_url: str) -> None:
    user = make_user()
    ws = personal_ws(user)
    publish(user, ws, slug="ship", frontmatter=COMMAND, instruction_body=BODY)
    publish(
        user,
        ws,
        slug="notes",
        frontmatter={"invoke": {"user": True, "model": False}},
        instruction_body="Notes: $ARGUMENTS / $1\n",
    )
    publish(user, ws, slug="plain", instruction_body="Not a command $ARGUMENTS\n")
    secret = _token(user, scopes=["skills:read"])

    async def body(client: Client) -> Any:
        listed = await client.list_prompts()
        shipped = await client.get_prompt("ship", {"target": "prod eu", "mode": "blue"})
        partial = await client.get_prompt("ship", {"mode": "it's"})
        notes = await client.get_prompt("notes", {"ARGUMENTS": "a 'b c'"})
        refusals = []
        for name, args in (("plain", None), ("nope", None), ("ship", {"other": "x"})):
            try:
                await client.get_prompt(name, args)
            except MCPError as exc:
                refusals.append(exc.error.code)
        return listed, shipped, partial, notes, refusals

    listed, shipped, partial, notes, refusals = with_mcp(live_url, secret, body)
    prompts = {p.name: p for p in listed.prompts}
    # invoke.model: false hides a skill from Level 0 for tokens, not from prompts.
    assert set(prompts) == {"ship", "notes"}
    assert [(a.name, a.required) for a in prompts["ship"].arguments] == [
        ("target", False),
        ("mode", False),
    ]
    assert [a.name for a in prompts["notes"].arguments] == ["ARGUMENTS"]
    assert prompts["ship"].description == "How to deploy safely."

    expected = _level1(live_url, secret, slug="ship", arguments="'prod eu' blue")
    assert _text(shipped) == expected["rendered_body"]
    assert "Ship prod eu" in _text(shipped)
    # A declared name left out keeps the positions of the later ones.
    quoted = _level1(live_url, secret, slug="ship", arguments="'' 'it'\"'\"'s'")
    assert _text(partial) == quoted["rendered_body"]
    assert (
        _text(notes)
        == _level1(live_url, secret, slug="notes", arguments="a 'b c'")["rendered_body"]
    )
    assert refusals == [types.INVALID_PARAMS] * 3


def test_in_a_team_a_proposal_is_no_command_until_approved(live_url: str) -> None:
    owner, author = make_user(), make_user()
    team = make_team(owner, members={author: "member"})
    first = save(
        author, team, slug="ship", intent="publish", frontmatter=COMMAND, instruction_body=BODY
    )
    reader = _token(author, scopes=["skills:read"])

    def names() -> list[str]:
        async def body(client: Client) -> list[str]:
            return [p.name for p in (await client.list_prompts()).prompts]

        return with_mcp(live_url, reader, body)

    def get(args: dict[str, str]) -> str:
        async def body(client: Client) -> str:
            return _text(await client.get_prompt("ship", args))

        return with_mcp(live_url, reader, body)

    assert names() == []  # proposed: unreviewed text is no command
    revision_transition(actor=actor_for(owner), revision=first.revision, action="approve")
    assert names() == ["ship"]
    approved = get({"target": "x"})
    # A newer proposal waits; the approved text is still what the command serves.
    save(
        author,
        team,
        slug="ship",
        intent="publish",
        frontmatter=COMMAND,
        instruction_body="New $target\n",
    )
    assert get({"target": "x"}) == approved
    assert approved == _level1(live_url, reader, slug="ship", arguments="x")["rendered_body"]
    assert approved.startswith("# Ship x")


def test_a_slug_in_two_workspaces_is_named_ws_slug(live_url: str) -> None:
    user = make_user()
    team = make_team(user, slug=f"{user.username}-t")
    let_authors_approve(team)
    publish(user, personal_ws(user), slug="ship", frontmatter=COMMAND, instruction_body=BODY)
    publish(user, team, slug="ship", frontmatter=COMMAND, instruction_body="Team $target\n")
    secret = _token(user, scopes=["skills:read"])

    async def body(client: Client) -> Any:
        listed = sorted(p.name for p in (await client.list_prompts()).prompts)
        return listed, _text(await client.get_prompt(f"{team.slug}/ship", {"target": "t"}))

    listed, text = with_mcp(live_url, secret, body)
    assert listed == sorted([f"{user.username}/ship", f"{team.slug}/ship"])
    assert text == "Team t\n"


def test_resources_read_equal_level2_byte_for_byte_pinned_and_not(live_url: str) -> None:
    user = make_user()
    ws = personal_ws(user)
    old = publish(
        user, ws, slug="deploy", components=(component("references/guide.md", "# Old\n"),)
    ).revision
    new = publish(
        user,
        ws,
        slug="deploy",
        components=(
            component("references/guide é.md", "# Güide\n"),
            component("assets/logo.png", PNG, "artifact"),
        ),
    ).revision
    secret = _token(user, scopes=["skills:read"])
    base = f"skill://{user.username}/deploy"

    async def body(client: Client) -> Any:
        listed = await client.list_resources()
        templates = await client.list_resource_templates()
        reads = {}
        for resource in listed.resources:
            reads[str(resource.uri)] = await client.read_resource(str(resource.uri))
        pinned = await client.read_resource(
            f"skill://{user.username}/{old.revision_id}/deploy/references/guide.md"
        )
        legacy = await client.read_resource(f"{base}@{old.revision_id}/references/guide.md")
        try:
            await client.read_resource(f"{base}/nope.md")
        except MCPError as exc:
            missing = exc.error.code
        return listed, templates, reads, pinned, legacy, missing

    listed, templates, reads, pinned, legacy, missing = with_mcp(live_url, secret, body)
    uris = [str(r.uri) for r in listed.resources]
    assert uris == [
        f"{base}/SKILL.md",
        f"{base}/assets/logo.png",
        f"{base}/references/guide%20%C3%A9.md",
    ]
    uris = uris[1:]
    assert [t.uri_template for t in templates.resource_templates] == [
        "skill://{workspace}/{slug}/{+path}",
        "skill://{workspace}/{revision_id}/{slug}/{+path}",
    ]

    def level2(revision_id: str, path: str) -> dict[str, Any]:
        response = rest(
            live_url,
            secret,
            "GET",
            "/v1/recall",
            params={"slug": "deploy", "revision_id": revision_id, "resource": path},
        )
        data: dict[str, Any] = response.json()["data"]
        return data

    png = reads[uris[0]].contents[0]
    assert isinstance(png, types.BlobResourceContents)
    assert png.blob == level2(new.revision_id, "assets/logo.png")["content"]
    assert base64.b64decode(png.blob) == PNG
    assert png.mime_type == "image/png"
    guide = reads[uris[1]].contents[0]
    assert isinstance(guide, types.TextResourceContents)
    assert guide.text == level2(new.revision_id, "references/guide é.md")["content"] == "# Güide\n"
    old_guide = pinned.contents[0]
    assert isinstance(old_guide, types.TextResourceContents)
    assert old_guide.text == level2(old.revision_id, "references/guide.md")["content"] == "# Old\n"
    legacy_guide = legacy.contents[0]  # the old pinned form still reads components
    assert isinstance(legacy_guide, types.TextResourceContents)
    assert legacy_guide.text == old_guide.text
    assert missing == -32602


def test_profiles_decide_who_sees_prompts_and_resources(live_url: str) -> None:
    user = make_user()
    publish(
        user,
        personal_ws(user),
        slug="ship",
        frontmatter=COMMAND,
        instruction_body=BODY,
        components=(component("references/r.md", "r"),),
    )

    def seen(profile: str) -> tuple[int, int, int, str]:
        secret = _token(user, scopes=["skills:read"], profile=profile)

        async def body(client: Client) -> tuple[int, int, int, str]:
            info = client.server_info
            return (
                len((await client.list_prompts()).prompts),
                len((await client.list_resources()).resources),
                len((await client.list_tools()).tools),
                info.version if info is not None else "",
            )

        return with_mcp(live_url, secret, body)

    assert seen("generic-public")[:3] == (0, 0, 0)
    assert seen("chatgpt-public")[:3] == (0, 2, 0)  # SKILL.md and r.md, published (§20)
    assert seen("claude-code")[:3] == (1, 2, 0)
    full = seen("ordinary-full")
    assert full[:3] == (1, 2, 3)
    assert full[3] == "0.1.0"


def test_tools_declare_an_output_schema_their_answers_meet(live_url: str) -> None:
    user = make_user()
    publish(user, personal_ws(user), slug="deploy")
    secret = _token(user)

    async def body(client: Client) -> Any:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        # The SDK client validates structured content against the declared schema.
        answer = await client.call_tool("recall_cloud_skill", {"slug": "deploy"})
        return tools, answer

    tools, answer = with_mcp(live_url, secret, body)
    assert tools["recall_cloud_skill"].output_schema["required"] == ["kind", "data"]
    assert "created" in tools["save_cloud_skill"].output_schema["properties"]
    assert answer.structured_content["kind"] == "root"
