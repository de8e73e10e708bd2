"""The Connect page (docs/contract.md §17): for each agent client, the way in — OAuth first,
then a token with the profile that client needs, then the bridge ``@xmemo/skill`` as a ZIP
with this server's URL filled in and no token inside."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from skills_app.console.base import Console, console_view
from skills_app.gateway.downloads import download_response
from skills_app.profiles import profile_with_tools
from skills_app.selectors.bridge import bridge_client_zip


@dataclass(frozen=True)
class ClientGuide:
    key: str
    name: str
    mcp_profile: str  # the contract's profile for the client; MCP needs one exposing tools
    skills_folder: str  # where the bridge goes as a native skill ("" = the client has none)
    bridge_profile: str  # the token profile for the bridge (REST: every profile reads)

    @property
    def profile(self) -> str:
        return profile_with_tools(self.mcp_profile)


CLAUDE_CODE = "claude-code"
CLIENTS = (
    ClientGuide(CLAUDE_CODE, "Claude Code", CLAUDE_CODE, "~/.claude/skills/xmemo/", CLAUDE_CODE),
    ClientGuide("codex", "Codex", "ordinary-full", "~/.codex/skills/xmemo/", "ordinary-full"),
    ClientGuide("cursor", "Cursor", "cursor-plugin", ".cursor/skills/xmemo/", "cursor-plugin"),
    ClientGuide("claude-desktop", "Claude Desktop", "ordinary-full", "", ""),
    ClientGuide("chatgpt", "ChatGPT", "chatgpt-public", "", ""),
    ClientGuide("mcp", "Any MCP client", "generic-public", "", ""),
)  # fmt: skip


def _server_url(request: HttpRequest) -> str:
    return (settings.XMEMO_PUBLIC_URL or request.build_absolute_uri("/")).rstrip("/")


@console_view(skills=False)
def connect(request: HttpRequest, console: Console) -> HttpResponse:
    server = _server_url(request)
    return console.render(
        "console/connect.html",
        {"clients": CLIENTS, "server_url": server, "mcp_url": f"{server}/mcp"},
    )


@console_view(skills=False)
def connect_bridge(request: HttpRequest, console: Console) -> HttpResponse:
    return download_response(
        bridge_client_zip(server_url=_server_url(request)),
        filename="xmemo-skill.zip",
        content_type="application/zip",
    )
