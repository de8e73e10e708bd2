"""The console's pages in real headless Chromium: every main page at 1280 and 390 px wide,
screenshotted, with no word broken across lines in a table, every checkbox and radio button on
its label's line, the usage card's time readable, and numbered diff lines (issue 37 #14); and
Connect from the navigation with its copyable configuration (issue 37 #16)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

import pytest
from oauth2_provider.models import Application
from playwright.sync_api import Page, expect

from skills_app.access import Actor
from skills_app.domain.bundle import ComponentData
from skills_app.selectors.recall import recall
from skills_app.services.skills import revision_transition
from tests.console.test_browser import _shot, _user, browser, sign_in
from tests.factories import make_team, make_token, save
from tests.usage import flush_usage

pytestmark = [pytest.mark.browser, pytest.mark.services]
__all__ = ["browser", "sign_in"]  # fixtures this module uses

# Each letters-and-digits run inside a data table's cell, with the lines its boxes sit on: a
# run on two lines is a word broken in the middle ("de mo", "Downlo ad").
BROKEN_WORDS = """() => {
  const broken = [];
  for (const cell of document.querySelectorAll(
      "table.table td, table.table th, table.usage-table td, table.usage-table th")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.data.matchAll(/[\\p{L}\\p{N}]+/gu)) {
        const range = document.createRange();
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        const lines = new Set([...range.getClientRects()].filter(r => r.width > 0)
          .map(r => Math.round(r.top)));
        if (lines.size > 1) broken.push(word[0]);
      }
    }
  }
  return broken;
}"""

# Each visible checkbox or radio button whose label's text starts on another line.
LABELS_OFF_THE_LINE = """() => {
  const off = [];
  for (const input of document.querySelectorAll("input[type=checkbox], input[type=radio]")) {
    const box = input.getBoundingClientRect();
    const label = input.closest("label");
    if (!label || box.width === 0) continue;
    const walker = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
    let node = walker.nextNode();
    while (node && !node.data.trim()) node = walker.nextNode();
    if (!node) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    const text = range.getClientRects()[0];
    const middle = (r) => r.top + r.height / 2;
    if (Math.abs(middle(text) - middle(box)) > box.height) off.push(label.textContent.trim());
  }
  return off;
}"""


@pytest.fixture
def pages(transactional_db: None, live_server: Any) -> dict[str, Any]:
    """A team with a published skill, a proposal against it, usage, a token and an OAuth
    client: every main page has its tables filled."""
    owner, author = _user("olive"), _user("ana")
    team = make_team(owner, slug="acme", members={author: "member"})
    body = "# Release\n\nTag the build.\nok\nAnnounce it.\nok\nClose the milestone.\n"
    component = ComponentData("references/checklist.md", "reference", b"- tag\n", "text/markdown")
    first = save(
        author, team, slug="release", intent="publish", instruction_body=body,
        components=(component,),
    ).revision  # fmt: skip
    revision_transition(actor=Actor(user=owner), revision=first, action="approve")
    changed = body.replace("Tag the build.", "Tag the signed build.").replace(
        "Announce it.", "Announce it in #releases."
    )
    proposal = save(author, team, slug="release", intent="publish", instruction_body=changed)
    token, _ = make_token(owner, name="demo-downloader-nightly")
    recall(actor=Actor(user=owner, token=token, via="api"), slug="acme/release")
    flush_usage()
    client = Application.objects.create(
        name="Agent",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1/callback",
        skip_authorization=False,
    )
    consent = "/oauth/authorize/?" + urlencode(
        {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": "http://127.0.0.1/callback",
            "state": "s",
            "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
            "code_challenge_method": "S256",
            "scope": "skills:read skills:write workspace:admin",
            "resource": f"{live_server.url}/mcp",
        }
    )
    skill = f"/w/acme/skills/{first.skill.skill_id}"
    diff = f"{skill}/diff/?from={first.revision_id}&to={proposal.revision.revision_id}"
    return {
        "owner": owner,
        "urls": {
            "skills-list": "/w/acme/skills/",
            "skill": f"{skill}/",
            "diff-inline": diff,
            "diff-side": f"{diff}&mode=side",
            "review": f"/w/acme/revisions/{proposal.revision.revision_id}/review/",
            "export": "/w/acme/export/",
            "tokens": "/w/acme/tokens/",
            "members": "/w/acme/members/",
            "audit": "/w/acme/audit/",
            "settings": "/w/acme/settings/",
            "connect": "/w/acme/connect/",
            "oauth-consent": consent,
        },
    }


def _check(page: Page, name: str) -> None:
    assert page.evaluate(BROKEN_WORDS) == [], name
    assert page.evaluate(LABELS_OFF_THE_LINE) == [], name


def test_main_pages_at_1280_and_390_px_break_no_word_and_keep_labels_on_their_line(
    sign_in: Any, pages: dict[str, Any]
) -> None:
    for width in (1280, 390):
        page = sign_in(pages["owner"], width=width).page
        for name, url in pages["urls"].items():
            page.goto(url)
            page.wait_for_load_state("networkidle")
            _shot(page, f"page-{name}-{width}")
            _check(page, f"{name} at {width} px")
        page.goto(pages["urls"]["skill"])
        expect(page.get_by_test_id("usage").locator("time")).to_have_text(
            re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$")
        )


def test_the_diff_numbers_its_lines_and_shows_unchanged_lines_once(
    sign_in: Any, pages: dict[str, Any]
) -> None:
    page = sign_in(pages["owner"]).page
    page.goto(pages["urls"]["diff-inline"])
    rows = page.locator("[data-testid=diff] table.diff-lines").first.locator("tr")
    cells = [[cell.strip() for cell in row.locator("td").all_inner_texts()] for row in rows.all()]
    assert cells[:4] == [
        ["1", "1", "", "# Release"],
        ["2", "2", "", ""],
        ["3", "", "\u2212", "Tag the build."],
        ["", "3", "+", "Tag the signed build."],
    ]
    assert cells[4] == ["4", "4", "", "ok"]  # between two edits, unchanged: once
    assert ["6", "6", "", "ok"] in cells
    expect(rows.nth(3).locator("ins")).to_have_text(" signed")


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
