"""The team's permission mode (docs/contract.md §21) in real headless Chromium: the owner picks
``dual-sign-required`` on the settings page, the page keeps it, the audit log page shows the
change, and a member is refused the page."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from skills_app.models import AuditEntry, Workspace
from tests.console.test_browser import browser, sign_in, team

pytestmark = [pytest.mark.browser, pytest.mark.services]
__all__ = ["browser", "sign_in", "team"]  # fixtures this module uses


def test_the_owner_sets_the_permission_mode_and_the_audit_log_shows_it(
    sign_in: Any, team: dict[str, Any]
) -> None:
    ws = team["ws"].slug
    page = sign_in(team["owner"]).page
    page.goto(f"/w/{ws}/settings/")
    mode = page.locator("#id_permission_mode")
    expect(mode).to_have_value("mutating-with-confirm")
    expect(page.locator("form.stack").first).to_contain_text("two distinct reviewers")
    mode.select_option("dual-sign-required")
    page.get_by_role("button", name="Save settings").click()
    expect(page.locator(".flash")).to_contain_text("Settings saved")
    expect(page.locator("#id_permission_mode")).to_have_value("dual-sign-required")
    assert Workspace.objects.get(slug=ws).permission_mode == "dual-sign-required"
    entry = AuditEntry.objects.get(workspace__slug=ws, action="workspace.settings.change")
    assert entry.data == {
        "permission_mode": {"from": "mutating-with-confirm", "to": "dual-sign-required"}
    }

    page.goto(f"/w/{ws}/audit/")
    row = page.get_by_test_id("audit").locator("tr", has_text="workspace.settings.change")
    expect(row).to_have_count(1)
    expect(row).to_contain_text(team["owner"].username)
    expect(row).to_contain_text("permission_mode=")

    member = sign_in(team["author"]).page
    answer = member.goto(f"/w/{ws}/settings/")
    assert answer is not None
    assert answer.status == 403
    expect(member.locator("#id_permission_mode")).to_have_count(0)
