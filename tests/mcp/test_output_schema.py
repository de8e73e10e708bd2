"""Every tool answer fits its tool's ``outputSchema`` (SPEC §18), errors included.

Standard clients check it: the TypeScript SDK (and so the MCP Inspector, Claude Desktop and
Cursor) throws ``-32602 … must have required property 'kind'`` on a tool error whose structured
content does not fit, and its user never sees ``NOT_FOUND``. A failure is ``isError: true`` with
the REST error envelope as text; whatever structured content a result carries fits the schema.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import mcp_types as types
import pytest
from django.contrib.auth.models import User
from mcp import Client

from skills_app import errors
from skills_app.mcp.outputs import output_schema
from skills_app.mcp.server import call_result
from skills_app.mcp.tools import SERVED_TOOLS
from tests.factories import (
    let_authors_approve,
    make_team,
    make_token,
    make_user,
    personal_ws,
    publish,
    save,
)
from tests.mcp.conftest import tool_answer, with_mcp
from tests.mcp.test_http import RECALL, SAVE
from tests.support import npm_cached

# The TypeScript SDK the MCP Inspector, Claude Desktop and Cursor are built on (pinned).
TS_SDK = ("@modelcontextprotocol/sdk", "1.32.2")
TS_CLIENT = Path(__file__).with_name("sdk_client.mjs")


def _product_errors() -> list[type[errors.XmemoError]]:
    found, todo = [], [errors.XmemoError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


@pytest.mark.parametrize("name", sorted(SERVED_TOOLS))
@pytest.mark.parametrize("error", _product_errors(), ids=lambda cls: cls.__name__)
def test_every_product_error_is_a_tool_error_within_the_tools_output_schema(
    name: str, error: type[errors.XmemoError]
) -> None:
    exc = error(details={"field": "slug"})
    result = call_result(exc)
    dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    if "structuredContent" in dumped:
        jsonschema.validate(dumped["structuredContent"], output_schema(name))
    assert dumped["isError"] is True
    assert [json.loads(item["text"]) for item in dumped["content"]] == [{"error": exc.as_dict()}]


def _error_cases(user: User) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Each refusal a tool call can meet, by token: (tool, arguments)."""
    ws = personal_ws(user)
    publish(user, ws, slug="deploy")
    save(user, ws, slug="draft-only", name="Draft only", description="Not published yet.")
    stale = save(user, ws, slug="release").revision
    save(user, ws, slug="release", instruction_body="# Newer\n")
    publish(user, ws, slug="shared", name="Shared personal")
    team = make_team(user, slug=f"{user.username}-team")
    let_authors_approve(team)  # a team of one
    publish(user, team, slug="shared", name="Shared team")
    off = make_team(user, slug=f"{user.username}-off")
    off.cloud_skills_enabled = False
    off.save()

    def payload(**overrides: Any) -> dict[str, Any]:
        good = {"workspace": ws.slug, "slug": "fresh", "name": "Fresh", "description": "New."}
        return {**good, "instruction_body": "# Fresh\n", **overrides}

    part = {"logical_path": "a.md", "type": "reference", "content": "x"}
    writer = make_token(user, ["skills:read", "skills:write"])[1]
    reader = make_token(user, ["skills:read"])[1]
    return {
        writer: [
            (RECALL, {"slug": "deploy", "resource": "references/guide.md"}),
            (RECALL, {"slug": "no-such-skill"}),
            (RECALL, {"slug": "shared"}),
            (RECALL, {"slug": "draft-only", "fallback": "none"}),
            (RECALL, {"slug": "deploy", "label": "nope"}),
            (RECALL, {"query": "   "}),
            (RECALL, {"slug": 5}),
            (RECALL, {"slug": "deploy", "workspace": off.slug}),
            (SAVE, payload(base_revision_id=stale.revision_id, slug="release")),
            (SAVE, payload(slug="Not A Slug")),
            (SAVE, payload(instruction_body="x" * 65_537)),
            (SAVE, payload(components=[{**part, "logical_path": "../x"}])),
            (SAVE, payload(components=[{**part, "logical_path": f"{i}.md"} for i in range(51)])),
            (SAVE, payload(components=[{**part, "content": base64.b64encode(b"x" * 131_073)}])),
            (SAVE, payload(workspace="someone-elses")),
            (SAVE, payload(colour="blue")),
        ],
        reader: [(SAVE, payload())],
    }


EXPECTED = [
    "REVISION_ID_REQUIRED",
    "NOT_FOUND",
    "AMBIGUOUS_SLUG",
    "NO_PUBLISHED_REVISION",
    "LABEL_NOT_FOUND",
    "VALIDATION_ERROR",
    "VALIDATION_ERROR",
    "FEATURE_DISABLED",
    "CONFLICT",
    "VALIDATION_ERROR",
    "BODY_TOO_LARGE",
    "INVALID_PATH",
    "TOO_MANY_COMPONENTS",
    "COMPONENT_TOO_LARGE",
    "NOT_FOUND",
    "VALIDATION_ERROR",
    "PERMISSION_DENIED",
]


def _json_cases(cases: dict[str, list[tuple[str, dict[str, Any]]]]) -> None:
    for calls in cases.values():
        for _, arguments in calls:
            for part in arguments.get("components", []):
                if isinstance(part["content"], bytes):
                    part.update(content=part["content"].decode("ascii"), encoding="base64")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_every_tool_error_of_the_sdk_client_fits_the_output_schema(
    live_url: str, mode: str
) -> None:
    cases = _error_cases(make_user())
    _json_cases(cases)

    async def calls(client: Client, *, todo: list[tuple[str, dict[str, Any]]]) -> list[str]:
        codes = []
        for name, arguments in todo:
            result: types.CallToolResult = await client.call_tool(name, arguments)
            codes.append(tool_answer(name, result)["error"]["code"])
        return codes

    codes = []
    for secret, todo in cases.items():
        codes += with_mcp(live_url, secret, functools.partial(calls, todo=todo), mode)
    assert codes == EXPECTED


@pytest.mark.django_db(transaction=True)
def test_the_typescript_sdk_client_reads_every_tool_error_without_throwing(
    live_url: str,
) -> None:
    modules = npm_cached(*TS_SDK)
    cases = _error_cases(make_user())
    _json_cases(cases)
    codes = []
    for secret, todo in cases.items():
        done = subprocess.run(
            ["node", str(TS_CLIENT), str(modules), live_url],
            input=json.dumps(todo),
            env={**os.environ, "XMEMO_TOKEN": secret},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        for result in json.loads(done.stdout):
            assert result["isError"] is True
            codes.append(json.loads(result["text"])["error"]["code"])
    assert codes == EXPECTED
