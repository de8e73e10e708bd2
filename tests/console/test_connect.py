"""The Connect page (docs/contract.md §17): every client's way in, and the bridge's download."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import tomllib
import zipfile
from html import unescape
from pathlib import Path

from django.test import Client

from tests.factories import Env, make_token


def test_connect_page_names_the_profile_each_client_needs(env: Env, owner_client: Client) -> None:
    page = owner_client.get(f"/w/{env.team.slug}/connect/")
    assert page.status_code == 200
    html = page.content.decode()
    sections = re.findall(r'data-testid="connect-([a-z-]+)"', html)
    assert sections == ["claude-code", "codex", "cursor", "claude-desktop", "chatgpt", "mcp"]

    def section(key: str) -> str:
        return html.split(f'data-testid="connect-{key}"', 1)[1].split("</section>", 1)[0]

    def profile(key: str, kind: str) -> str:
        found = re.search(rf'data-testid="{kind}-profile">([^<]+)<', section(key))
        assert found is not None, key
        return found.group(1)

    # A profile that exposes no tool is never offered for MCP (claude-code, chatgpt-public and
    # generic-public expose none); Cursor keeps its own.
    assert {k: profile(k, "oauth") for k in sections} == {
        "claude-code": "ordinary-full",
        "codex": "ordinary-full",
        "cursor": "cursor-plugin",
        "claude-desktop": "ordinary-full",
        "chatgpt": "ordinary-full",
        "mcp": "ordinary-full",
    }
    assert profile("claude-code", "bridge") == "claude-code"  # the bridge speaks REST
    assert section("claude-code").index("OAuth") < section("claude-code").index("Token")
    for key in ("claude-code", "codex", "cursor"):
        assert f"/w/{env.team.slug}/connect/xmemo-skill.zip" in section(key)
    assert "xmemo-skill.zip" not in section("chatgpt")
    assert 'data-testid="server-url">http://testserver<' in html


def test_the_bridge_download_knows_the_server_and_holds_no_token(
    env: Env, owner_client: Client
) -> None:
    _, secret = make_token(env.owner)
    response = owner_client.get(f"/w/{env.team.slug}/connect/xmemo-skill.zip")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert 'filename="xmemo-skill.zip"' in response["Content-Disposition"]
    data = response.content
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = archive.namelist()
        config = json.loads(archive.read("xmemo/config.json"))
        skill_md = archive.read("xmemo/SKILL.md").decode()
        mode = archive.getinfo("xmemo/scripts/xmemo-skill.mjs").external_attr >> 16
    assert names == [
        "xmemo/package.json",
        "xmemo/README.md",
        "xmemo/SKILL.md",
        "xmemo/scripts/lib.mjs",
        "xmemo/scripts/login.mjs",
        "xmemo/scripts/xmemo-skill.mjs",
        "xmemo/config.json",
    ]
    assert config == {"url": "http://testserver"}
    assert skill_md.startswith("---\nname: xmemo\n")
    assert mode & 0o111
    assert secret.encode() not in data
    assert b"xm_" not in data.replace(b"xmemo", b"")


def test_strangers_get_404_and_the_tokens_page_and_empty_list_link_here(
    env: Env, owner_client: Client
) -> None:
    stranger = Client()
    stranger.force_login(env.outsider)
    assert stranger.get(f"/w/{env.team.slug}/connect/").status_code == 404
    assert stranger.get(f"/w/{env.team.slug}/connect/xmemo-skill.zip").status_code == 404
    connect = f'href="/w/{env.team.slug}/connect/"'
    assert connect in owner_client.get(f"/w/{env.team.slug}/tokens/").content.decode()
    assert connect in owner_client.get(f"/w/{env.team.slug}/skills/").content.decode()


def _snippets(html: str, key: str) -> list[str]:
    section = html.split(f'data-testid="connect-{key}"', 1)[1].split("</section>", 1)[0]
    pre = r"<pre [^>]*data-copy-source[^>]*>([^<]*)</pre>"
    return [unescape(text) for text in re.findall(pre, section)]


def test_connect_page_has_copyable_configuration_with_this_servers_url(
    env: Env, owner_client: Client
) -> None:
    """Issue 37 #16: no copyable configuration. Each client gets what to paste, with this
    server's MCP URL filled in: the `claude mcp add` line, Codex's config.toml, Cursor's
    mcp.json, the connector URL of Claude Desktop and ChatGPT."""
    html = owner_client.get(f"/w/{env.team.slug}/connect/").content.decode()
    mcp = "http://testserver/mcp"
    assert _snippets(html, "claude-code")[0] == f"claude mcp add --transport http xmemo {mcp}"
    codex = tomllib.loads(_snippets(html, "codex")[0])
    assert codex == {"mcp_servers": {"xmemo": {"url": mcp, "bearer_token_env_var": "XMEMO_TOKEN"}}}
    cursor = json.loads(_snippets(html, "cursor")[0])
    assert cursor == {"mcpServers": {"xmemo": {"url": mcp}}}
    for key in ("claude-desktop", "chatgpt", "mcp"):
        assert _snippets(html, key) == [mcp]
    extension = html.split('data-testid="skills-extension"', 1)[1].split("</p>", 1)[0]
    offered, refused = extension.split("(not ")
    for profile in ("ordinary-full", "cursor-plugin", "claude-code", "chatgpt-public"):
        assert f"<code>{profile}</code>" in offered  # the contract file's extensions section
    assert "<code>generic-public</code>" in refused
    assert len(re.findall(r'data-testid="reads-skills"', html)) == 6


def test_the_unzip_instruction_yields_the_skill_folder_not_xmemo_xmemo(
    env: Env, owner_client: Client, tmp_path: Path
) -> None:
    """Issue 37 #16: "unzip into ~/.claude/skills/xmemo/" gave xmemo/xmemo/SKILL.md, as the
    ZIP already holds xmemo/. The page's own command, run as written, gives
    ~/.claude/skills/xmemo/SKILL.md."""
    html = owner_client.get(f"/w/{env.team.slug}/connect/").content.decode()
    (tmp_path / "xmemo-skill.zip").write_bytes(
        owner_client.get(f"/w/{env.team.slug}/connect/xmemo-skill.zip").content
    )
    home = tmp_path / "home"
    for key, folder in (("claude-code", ".claude/skills"), ("codex", ".codex/skills")):
        command = _snippets(html, key)[-1]
        assert command == f"mkdir -p ~/{folder} && unzip xmemo-skill.zip -d ~/{folder}"
        if shutil.which("unzip"):
            subprocess.run(
                ["sh", "-c", command],
                cwd=tmp_path,
                env={"HOME": str(home), "PATH": os.environ["PATH"]},
                check=True,
                capture_output=True,
            )
        else:
            with zipfile.ZipFile(tmp_path / "xmemo-skill.zip") as archive:
                archive.extractall(home / folder)
        assert (home / folder / "xmemo" / "SKILL.md").is_file()
        assert not (home / folder / "xmemo" / "xmemo").exists()


def test_connect_is_in_the_navigation(env: Env, member_client: Client) -> None:
    """Issue 37 #16: Connect was linked only from the tokens page and the empty skills list."""
    for page in ("skills/", "review/", "members/", "connect/"):
        html = member_client.get(f"/w/{env.team.slug}/{page}").content.decode()
        nav = html.split('<nav class="tabs"', 1)[1].split("</nav>", 1)[0]
        assert f'<a href="/w/{env.team.slug}/connect/"' in nav, page
