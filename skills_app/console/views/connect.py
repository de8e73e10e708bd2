"""The Connect page (docs/contract.md §17): for each agent client, the way in — OAuth first,
then a token with the profile that client needs, then the bridge ``@xmemo/skill`` as a ZIP
with this server's URL filled in and no token inside."""

from __future__ import annotations

import json
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from skills_app.console.base import Console, console_view
from skills_app.gateway.downloads import download_response
from skills_app.mcp_profiles import profile_extensions, profile_names, profile_with_tools
from skills_app.selectors.bridge import bridge_client_zip

# The MCP Skills extension (SEP-2640, SPEC §20); the contract file says which profiles get it.
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"


@dataclass(frozen=True)
class Snippet:
    """One block of configuration to copy, this server's URL filled in."""

    title: str
    text: str
    note: str = ""


@dataclass(frozen=True)
class ClientGuide:
    key: str
    name: str
    mcp_profile: str  # the contract's profile for the client; MCP needs one exposing tools
    skills_dir: str  # the skills folder the bridge's ZIP (it holds xmemo/) unzips into, or ""
    bridge_profile: str  # the token profile for the bridge (REST: every profile reads)

    @property
    def profile(self) -> str:
        return profile_with_tools(self.mcp_profile)

    @property
    def reads_skills_extension(self) -> bool:
        return SKILLS_EXTENSION in profile_extensions(self.profile)


CLAUDE_CODE = "claude-code"
CLIENTS = (
    ClientGuide(CLAUDE_CODE, "Claude Code", CLAUDE_CODE, "~/.claude/skills", CLAUDE_CODE),
    ClientGuide("codex", "Codex", "ordinary-full", "~/.codex/skills", "ordinary-full"),
    ClientGuide("cursor", "Cursor", "cursor-plugin", ".cursor/skills", "cursor-plugin"),
    ClientGuide("claude-desktop", "Claude Desktop", "ordinary-full", "", ""),
    ClientGuide("chatgpt", "ChatGPT", "chatgpt-public", "", ""),
    ClientGuide("mcp", "Any MCP client", "generic-public", "", ""),
)  # fmt: skip


def _snippets(key: str, mcp_url: str) -> list[Snippet]:
    """What to paste into each client, with this server's MCP URL."""
    if key == CLAUDE_CODE:
        return [
            Snippet(
                "Add the server (Claude Code signs in with OAuth on first use)",
                f"claude mcp add --transport http xmemo {mcp_url}",
            )
        ]
    if key == "codex":
        url = json.dumps(mcp_url)  # a TOML basic string too
        toml = f'[mcp_servers.xmemo]\nurl = {url}\nbearer_token_env_var = "XMEMO_TOKEN"\n'
        note = "Or leave out bearer_token_env_var and run codex mcp login xmemo (OAuth)."
        return [Snippet("~/.codex/config.toml", toml, note)]
    if key == "cursor":
        servers = {"mcpServers": {"xmemo": {"url": mcp_url}}}
        header = '"headers": {"Authorization": "Bearer ${env:XMEMO_TOKEN}"}'
        note = f"With a token instead: add {header}."
        return [Snippet("~/.cursor/mcp.json (OAuth)", json.dumps(servers, indent=2) + "\n", note)]
    if key == "claude-desktop":
        return [Snippet("Connector URL (Settings → Connectors → Add custom connector)", mcp_url)]
    if key == "chatgpt":
        return [Snippet("Connector URL (Settings → Connectors → Create)", mcp_url)]
    return [Snippet("MCP endpoint (streamable HTTP)", mcp_url)]


def _server_url(request: HttpRequest) -> str:
    return (settings.XMEMO_PUBLIC_URL or request.build_absolute_uri("/")).rstrip("/")


@console_view(skills=False)
def connect(request: HttpRequest, console: Console) -> HttpResponse:
    server = _server_url(request)
    mcp_url = f"{server}/mcp"
    clients = [(client, _snippets(client.key, mcp_url)) for client in CLIENTS]
    extension = [p for p in profile_names() if SKILLS_EXTENSION in profile_extensions(p)]
    return console.render(
        "console/connect.html",
        {
            "clients": clients,
            "server_url": server,
            "mcp_url": mcp_url,
            "skills_extension": SKILLS_EXTENSION,
            "extension_profiles": extension,
            "no_extension_profiles": [p for p in profile_names() if p not in extension],
        },
    )


@console_view(skills=False)
def connect_bridge(request: HttpRequest, console: Console) -> HttpResponse:
    return download_response(
        bridge_client_zip(server_url=_server_url(request)),
        filename="xmemo-skill.zip",
        content_type="application/zip",
    )
