"""The console's pages in real headless Chromium: Connect from the navigation with its
copyable configuration (issue 37 #16)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.console.test_browser import _user, browser, sign_in
from tests.factories import make_team

pytestmark = [pytest.mark.browser, pytest.mark.services]
__all__ = ["browser", "sign_in"]  # fixtures this module uses


def test_connect_from_the_navigation_and_copy_the_claude_code_line(
    sign_in: Any, live_server: Any, transactional_db: None
) -> None:
    owner = _user("olive")
    make_team(owner, slug="acme")
    page = sign_in(owner).page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto("/w/acme/skills/")
    page.locator("nav.tabs").get_by_role("link", name="Connect").click()
    expect(page.locator("h1")).to_contain_text("Connect an agent")
    claude = page.get_by_test_id("connect-claude-code")
    claude.get_by_role("button", name="Copy").first.click()
    expect(claude.get_by_role("button", name="Copied")).to_be_visible()
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert copied == f"claude mcp add --transport http xmemo {live_server.url}/mcp"
