"""The MCP Skills extension (docs/contract.md §20) through the ``mcp`` SDK's own client against
the live server, on both protocol revisions: what a host does — list, verify, read."""

from __future__ import annotations

import hashlib
from typing import Any

import mcp_types as types
import pytest
import yaml
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict

from skills_app.models import Skill
from skills_app.services.skills import revision_transition, skill_set_status
from tests.api.test_scans import INJECTED
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
from tests.mcp.conftest import with_mcp
from tests.mcp.test_http import PNG, _token

pytestmark = pytest.mark.django_db(transaction=True)

EXTENSION = "io.modelcontextprotocol/skills"
MODES = ("legacy", "2026-07-28")
RICH = {
    "license": "Apache-2.0",
    "version": 1.0,
    "released": "2024-01-01",
    "enabled": "yes",
    "ratio": "1e3",
    "octal": "0o17",
    "metadata": {"owner": "ops", "tags": ["deploy", "prod"], "nested": {"depth": 2}},
    "allowed-tools": ["Bash(git:*)", "Read"],
}
# Nested folders, a binary file, a non-ASCII name.
FOLDERS = (
    component("templates/invoice.md", "# Invoice\n", "template"),
    component("templates/regional/eu é.md", "# EU\n", "template"),
    component("assets/logo.png", PNG, "artifact"),
)


class _Result(BaseModel):
    model_config = ConfigDict(extra="allow")


class _Params(types.RequestParams):
    uri: str | None = None
    cursor: str | None = None


class _Ext(types.Request[_Params, str]):
    method: str
    params: _Params


async def ext(client: Client, method: str, **params: str | None) -> dict[str, Any]:
    """One request of the extension (the SDK client has no skills helpers)."""
    request = _Ext(method=method, params=_Params.model_validate(params))
    return (await client.session.send_request(request, _Result)).model_dump()


async def declared(client: Client) -> dict[str, Any] | None:
    """The extensions declared: in ``initialize`` (legacy), else in ``server/discover``."""
    if client.protocol_version == "2026-07-28":
        raw = await client.session.send_discover("2026-07-28")
        return types.DiscoverResult.model_validate(raw).capabilities.extensions
    return client.server_capabilities.extensions


async def list_all(client: Client) -> list[dict[str, Any]]:
    skills: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = await ext(client, "skills/list", cursor=cursor)
        assert page["resultType"] == "complete"
        skills += page["skills"]
        cursor = page.get("nextCursor")
        if cursor is None:
            return skills


async def read_bytes(client: Client, uri: str) -> bytes:
    import base64

    contents = (await client.read_resource(uri)).contents
    assert len(contents) == 1
    item = contents[0]
    if isinstance(item, types.BlobResourceContents):
        return base64.b64decode(item.blob)
    assert isinstance(item, types.TextResourceContents)
    return item.text.encode("utf-8")


def frontmatter_of(skill_md: bytes) -> dict[str, Any]:
    text = skill_md.decode("utf-8")
    assert text.startswith("---\n")
    head = text[4 : text.index("\n---\n", 3)]
    parsed: dict[str, Any] = yaml.safe_load(head)
    return parsed


@pytest.mark.parametrize("mode", MODES)
def test_a_host_lists_verifies_and_reads_every_file(live_url: str, mode: str) -> None:
    user = make_user()
    ws = personal_ws(user)
    publish(
        user,
        ws,
        slug="deploy",
        frontmatter=RICH,
        instruction_body="# Deploy\n\nPick a template from `templates/`.\n",
        components=FOLDERS,
    )
    secret = _token(user, scopes=["skills:read"], profile="claude-code")

    async def body(client: Client) -> Any:
        extensions = await declared(client)
        listed = await list_all(client)
        entry = listed[0]
        got = await ext(client, "skills/get", uri=entry["uri"])
        files = {r["uri"]: await read_bytes(client, r["uri"]) for r in entry["resources"]}
        return extensions, listed, got, files

    extensions, listed, got, files = with_mcp(live_url, secret, body, mode)
    assert extensions == {EXTENSION: {"directoryRead": True}}
    assert [e["uri"] for e in listed] == [f"skill://{ws.slug}/deploy/SKILL.md"]
    entry = listed[0]
    assert got["skill"] == entry
    assert (got["ttlMs"], got["cacheScope"], got["resultType"]) == (0, "private", "complete")
    assert "nextCursor" not in got
    assert sorted(files) == sorted(r["uri"] for r in entry["resources"])
    assert len(files) == 4  # SKILL.md and every component, each once
    for resource in entry["resources"]:
        raw = files[resource["uri"]]
        assert resource["size"] == len(raw)
        assert resource["digest"] == f"sha256:{hashlib.sha256(raw).hexdigest()}"
    served = frontmatter_of(files[entry["uri"]])
    assert served.keys() == entry["frontmatter"].keys()
    for key, value in served.items():
        assert entry["frontmatter"][key] == value
        assert type(entry["frontmatter"][key]) is type(value)
    assert entry["frontmatter"]["name"] == "deploy"  # the URI's last skill-path segment
    assert isinstance(served["version"], float)  # 1.0 stays a float
    assert entry["_meta"]["io.xmemo/state"] == "published"


@pytest.mark.parametrize("mode", MODES)
def test_folders_read_level_by_level(live_url: str, mode: str) -> None:
    user = make_user()
    ws = personal_ws(user)
    publish(user, ws, slug="deploy", components=FOLDERS)
    secret = _token(user, scopes=["skills:read"])
    root = f"skill://{ws.slug}/deploy"

    async def body(client: Client) -> Any:
        top = await ext(client, "resources/directory/read", uri=root)
        templates = await ext(client, "resources/directory/read", uri=f"{root}/templates")
        codes = []
        for uri in (f"{root}/SKILL.md", f"{root}/assets/logo.png", f"{root}/nope", root + "/"):
            try:
                await ext(client, "resources/directory/read", uri=uri)
            except MCPError as exc:
                codes.append(exc.error.code)
        return top, templates, codes

    top, templates, codes = with_mcp(live_url, secret, body, mode)
    assert [(r["name"], r["mimeType"]) for r in top["resources"]] == [
        ("SKILL.md", "text/markdown"),
        ("assets", "inode/directory"),
        ("templates", "inode/directory"),
    ]
    # A file has its size, a folder none (shapes.entries.DirectoryChild).
    assert [sorted(r) for r in top["resources"]] == [
        ["mimeType", "name", "size", "uri"],
        ["mimeType", "name", "uri"],
        ["mimeType", "name", "uri"],
    ]
    assert top["resources"][0]["size"] > 0
    assert [(r["uri"], r["mimeType"]) for r in templates["resources"]] == [
        (f"{root}/templates/invoice.md", "text/markdown"),
        (f"{root}/templates/regional", "inode/directory"),
    ]
    assert codes == [-32602] * 4


def test_a_pinned_revision_reads_the_same_bytes_after_a_newer_one(live_url: str) -> None:
    user = make_user()
    ws = personal_ws(user)
    old = publish(
        user, ws, slug="deploy", components=(component("references/r.md", "# Old\n"),)
    ).revision
    secret = _token(user, scopes=["skills:read"])
    pinned = f"skill://{ws.slug}/{old.revision_id}/deploy/SKILL.md"

    async def snapshot(client: Client) -> tuple[dict[str, Any], dict[str, bytes]]:
        entry = (await ext(client, "skills/get", uri=pinned))["skill"]
        return entry, {r["uri"]: await read_bytes(client, r["uri"]) for r in entry["resources"]}

    before = with_mcp(live_url, secret, snapshot)
    publish(
        user,
        ws,
        slug="deploy",
        instruction_body="# Changed\n",
        components=(component("references/r.md", "# New\n"),),
    )
    after = with_mcp(live_url, secret, snapshot)
    assert after[1] == before[1]  # the same bytes
    assert {**after[0], "_meta": None} == {**before[0], "_meta": None}  # and the same entry
    assert after[0]["_meta"]["io.xmemo/state"] == "deprecated"  # what moved is its state
    assert before[0]["uri"] == pinned
    assert before[1][f"skill://{ws.slug}/{old.revision_id}/deploy/references/r.md"] == b"# Old\n"


def test_entries_and_skill_md_carry_the_scan(live_url: str) -> None:
    """§21: ``_meta["io.xmemo/scan"]`` on ``skills/list``, ``skills/get`` and the SKILL.md read:
    the stored scan's verdict and findings."""
    user = make_user()
    ws = personal_ws(user)
    publish(user, ws, slug="deploy")
    save(user, ws, slug="injected", instruction_body=INJECTED)
    secret = _token(user, scopes=["skills:read"], profile="claude-code")
    injected = f"skill://{ws.slug}/injected/SKILL.md"

    async def scans(client: Client) -> list[dict[str, Any]]:
        [listed] = await list_all(client)
        got = (await ext(client, "skills/get", uri=injected))["skill"]
        [read] = (await client.read_resource(injected)).contents
        assert read.meta is not None
        return [
            listed["_meta"]["io.xmemo/scan"],
            got["_meta"]["io.xmemo/scan"],
            read.meta["io.xmemo/scan"],
        ]

    listed, got, read = with_mcp(live_url, secret, scans)
    assert listed["verdict"] == "clean"
    assert got == read
    assert set(got) == {"verdict", "findings", "scanner_version"}  # contract §21, exactly
    assert got["verdict"] == "block"
    assert {finding["category"] for finding in got["findings"]} == {"prompt_injection"}


def test_foreign_archived_and_unknown_skills_answer_alike(live_url: str) -> None:
    user, other = make_user(), make_user()
    ws = personal_ws(user)
    publish(other, personal_ws(other), slug="deploy")
    archived = publish(user, ws, slug="old").revision
    skill_set_status(actor=actor_for(user), skill=Skill.objects.get(slug="old"), status="archived")
    secret = _token(user, scopes=["skills:read"])

    async def body(client: Client) -> dict[str, Any]:
        answers = {}
        for name, uri in {
            "foreign": f"skill://{other.username}/deploy/SKILL.md",
            "nobody": "skill://nobody-here/deploy/SKILL.md",
            "archived": f"skill://{ws.slug}/old/SKILL.md",
            "unknown": f"skill://{ws.slug}/never/SKILL.md",
            "legacy-pin": f"skill://{ws.slug}/old@{archived.revision_id}/SKILL.md",
        }.items():
            try:
                await ext(client, "skills/get", uri=uri)
            except MCPError as exc:
                answers[name] = exc.error
        pinned = f"skill://{ws.slug}/{archived.revision_id}/old/SKILL.md"
        answers["pinned-archived"] = (await ext(client, "skills/get", uri=pinned))["skill"]
        return answers

    answers = with_mcp(live_url, secret, body)
    refused = ("foreign", "nobody", "archived", "unknown", "legacy-pin")
    assert {answers[name].code for name in refused} == {-32602}
    # The same answer, up to the names asked for (a foreign workspace is an unknown one).
    assert answers["foreign"].message.replace(other.username, "nobody-here") == (
        answers["nobody"].message
    )
    assert answers["archived"].message.replace("old", "x") == answers["unknown"].message.replace(
        "never", "x"
    )
    assert answers["pinned-archived"]["_meta"]["io.xmemo/revision_id"] == archived.revision_id


def test_a_team_proposal_is_never_listed_until_approved(live_url: str) -> None:
    owner = make_user()
    team = make_team(owner)
    let_authors_approve(team)
    proposed = save(owner, team, slug="rollout", intent="publish").revision
    assert proposed.state == "proposed"
    secret = _token(owner, scopes=["skills:read"])

    async def body(client: Client) -> tuple[list[dict[str, Any]], int]:
        listed = await list_all(client)
        try:
            await ext(client, "skills/get", uri=f"skill://{team.slug}/rollout/SKILL.md")
        except MCPError as exc:
            return listed, exc.error.code
        return listed, 0

    assert with_mcp(live_url, secret, body) == ([], -32602)
    revision_transition(actor=actor_for(owner), revision=proposed, action="approve")
    listed, _ = with_mcp(live_url, secret, body)
    assert [e["uri"] for e in listed] == [f"skill://{team.slug}/rollout/SKILL.md"]


@pytest.mark.parametrize("mode", MODES)
def test_generic_public_sees_no_extension(live_url: str, mode: str) -> None:
    user = make_user()
    publish(user, personal_ws(user), slug="deploy")
    secret = _token(user, scopes=["skills:read"], profile="generic-public")

    async def body(client: Client) -> tuple[Any, int]:
        try:
            await ext(client, "skills/list")
        except MCPError as exc:
            return await declared(client), exc.error.code
        return await declared(client), 0

    assert with_mcp(live_url, secret, body, mode) == (None, -32601)


def test_chatgpt_public_reads_published_revisions_only(live_url: str) -> None:
    user = make_user()
    ws = personal_ws(user)
    published = publish(user, ws, slug="deploy").revision
    path = published.components.get().logical_path
    draft = save(user, ws, slug="deploy", instruction_body="# Draft\n").revision
    save(user, ws, slug="notes")  # a draft only: Level 1 serves it to the owner, not here
    secret = _token(user, scopes=["skills:read"], profile="chatgpt-public")

    async def body(client: Client) -> Any:
        listed = await list_all(client)
        resources = [str(r.uri) for r in (await client.list_resources()).resources]
        codes = []
        for uri in (
            f"skill://{ws.slug}/{draft.revision_id}/deploy/SKILL.md",
            f"skill://{ws.slug}/notes/SKILL.md",
        ):
            try:
                await client.read_resource(uri)
            except MCPError as exc:
                codes.append(exc.error.code)
        return listed, resources, codes

    listed, resources, codes = with_mcp(live_url, secret, body)
    assert [e["_meta"]["io.xmemo/revision_id"] for e in listed] == [published.revision_id]
    assert resources == [f"skill://{ws.slug}/deploy/SKILL.md", f"skill://{ws.slug}/deploy/{path}"]
    assert codes == [-32602, -32602]
