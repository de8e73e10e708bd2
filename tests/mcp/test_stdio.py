"""``python manage.py mcp_stdio --token TOKEN`` driven by the SDK's own stdio client.

The command runs as a subprocess pointed at this test run's database, so the data the test
writes (committed: ``transaction=True``) is what it serves.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import anyio
import mcp_types as types
import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client as DjangoClient
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from skills_app.models import SkillRevision
from tests.factories import component, make_token, make_user, personal_ws, publish
from tests.mcp.test_skills_extension import declared, ext
from tests.support import require_service

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def _database_url() -> str | None:
    """A URL the subprocess can open for this run's test database, if it has one on disk."""
    db = connection.settings_dict
    if connection.vendor == "postgresql":
        password = f":{quote(db['PASSWORD'], safe='')}" if db["PASSWORD"] else ""
        host = f"{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
        return f"postgres://{quote(db['USER'], safe='')}{password}@{host}/{db['NAME']}"
    if connection.vendor == "sqlite" and "mode=memory" not in str(db["NAME"]):
        return f"sqlite:///{db['NAME']}"
    return None


def _with_stdio(
    secret: str,
    body: Callable[[Client], Awaitable[T]],
    mode: str = "auto",
    *,
    env_token: bool = False,
) -> T:
    """Serve over stdio with the token on the command line, or (``env_token``, the documented
    form) in ``XMEMO_TOKEN``, where ``ps`` does not show it."""
    url = _database_url()
    require_service(
        "A test database the stdio subprocess can open",
        url is not None,
        "use PostgreSQL (DATABASE_URL) or a file SQLite test database (XMEMO_TEST_DB_NAME)",
    )
    assert url is not None
    env = {"DATABASE_URL": url, "SECRET_KEY": "stdio-test", "XMEMO_SECURE_COOKIES": "0"}
    args = ["manage.py", "mcp_stdio"]
    if env_token:
        env["XMEMO_TOKEN"] = secret
    else:
        args += ["--token", secret]
    server = StdioServerParameters(command=sys.executable, args=args, cwd=ROOT, env=env)

    async def run() -> T:
        async with Client(server, mode=mode) as client:
            return await body(client)

    return anyio.run(run)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_stdio_lists_recalls_and_saves_like_rest(mode: str) -> None:
    user = make_user()
    publish(user, personal_ws(user), slug="deploy", components=(component("ref/a.md", "# A\n"),))
    secret = make_token(user, ["skills:read", "skills:write"])[1]
    payload = {
        "workspace": user.username,
        "slug": "release",
        "name": "Release",
        "description": "How to ship.",
        "instruction_body": "# Ship\n",
    }

    async def body(client: Client) -> tuple[list[str], types.CallToolResult, types.CallToolResult]:
        names = [tool.name for tool in (await client.list_tools()).tools]
        recalled = await client.call_tool("recall_cloud_skill", {"slug": "deploy"})
        saved = await client.call_tool("save_cloud_skill", payload)
        return names, recalled, saved

    names, recalled, saved = _with_stdio(secret, body, mode)
    assert names == ["recall_cloud_skill", "save_cloud_skill", "report_skill_outcome"]
    auth = {"Authorization": f"Bearer {secret}"}
    rest = DjangoClient().get("/v1/recall", {"slug": "deploy"}, headers=auth)
    assert recalled.structured_content == rest.json()
    assert not saved.is_error, saved.structured_content
    revision = SkillRevision.objects.get(revision_id=saved.structured_content["revision_id"])
    assert (revision.skill.slug, revision.source, revision.state) == ("release", "mcp", "draft")


def test_stdio_shows_a_public_profile_nothing() -> None:
    user = make_user()
    publish(user, personal_ws(user), slug="deploy")
    secret = make_token(user, ["skills:read", "skills:write"], profile="claude-code")[1]

    async def body(client: Client) -> tuple[list[types.Tool], str]:
        tools = (await client.list_tools()).tools
        with pytest.raises(MCPError) as refused:
            await client.call_tool("recall_cloud_skill", {"slug": "deploy"})
        return tools, refused.value.message

    assert _with_stdio(secret, body) == ([], "Unknown tool: recall_cloud_skill")


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
def test_stdio_serves_the_skills_extension(mode: str) -> None:
    """docs/contract.md §20 over stdio as over HTTP: declared, listed, read."""
    user = make_user()
    publish(user, personal_ws(user), slug="deploy", components=(component("ref/a.md", "# A\n"),))
    secret = make_token(user, ["skills:read"], profile="claude-code")[1]

    async def body(client: Client) -> tuple[Any, list[str], bytes]:
        listed = (await ext(client, "skills/list"))["skills"]
        read = (await client.read_resource(f"skill://{user.username}/deploy/ref/a.md")).contents
        assert isinstance(read[0], types.TextResourceContents)
        return await declared(client), [e["uri"] for e in listed], read[0].text.encode()

    extensions, uris, text = _with_stdio(secret, body, mode)
    assert extensions == {"io.modelcontextprotocol/skills": {"directoryRead": True}}
    assert (uris, text) == ([f"skill://{user.username}/deploy/SKILL.md"], b"# A\n")


@pytest.mark.parametrize("secret", ["xm_" + "0" * 43, "not-a-token"])
def test_stdio_refuses_to_start_without_a_valid_token(secret: str) -> None:
    with pytest.raises(CommandError, match="token"):
        call_command("mcp_stdio", "--token", secret)


def test_stdio_takes_the_token_from_xmemo_token() -> None:
    """Issue 25 #19: the token on a command line is visible in ``ps``; ``XMEMO_TOKEN`` keeps it
    in the environment of the client's subprocess."""
    user = make_user()
    publish(user, personal_ws(user), slug="deploy")
    secret = make_token(user, ["skills:read"])[1]

    async def body(client: Client) -> types.CallToolResult:
        return await client.call_tool("recall_cloud_skill", {"slug": "deploy"})

    recalled = _with_stdio(secret, body, env_token=True)
    assert not recalled.is_error, recalled.structured_content
    assert recalled.structured_content["data"]["slug"] == "deploy"


def test_stdio_without_a_token_says_where_to_put_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XMEMO_TOKEN", raising=False)
    with pytest.raises(CommandError, match="XMEMO_TOKEN"):
        call_command("mcp_stdio")


def test_a_refused_env_token_is_refused_like_the_option_and_never_echoed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = "xm_" + "7" * 43
    with pytest.raises(CommandError) as by_option:
        call_command("mcp_stdio", "--token", secret)
    monkeypatch.setenv("XMEMO_TOKEN", secret)
    with pytest.raises(CommandError) as by_env:
        call_command("mcp_stdio")
    assert str(by_env.value) == str(by_option.value)
    assert "token" in str(by_env.value)
    assert "7777" not in str(by_env.value)
