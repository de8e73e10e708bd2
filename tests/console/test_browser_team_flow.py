"""The product's whole team flow in real headless Chromium, end to end: the owner invites a new
address, the invitee joins from the e-mailed link and proposes a revision as a member, and the
review conversation (line comment, changes requested, revision, two approvals) ends with Level 1
serving the approved revision."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser

from skills_app.models import Membership
from tests.console.test_browser import _user, browser, invite_and_join, sign_in
from tests.console.test_browser_reviews import review_conversation
from tests.factories import make_team

pytestmark = [pytest.mark.browser, pytest.mark.services]
__all__ = ["browser", "sign_in"]  # fixtures this module uses


def test_invitee_joins_proposes_and_two_admins_publish_after_changes(
    sign_in: Any, browser: Browser, live_server: Any, transactional_db: None
) -> None:
    owner, admin = _user("olive"), _user("adam")
    for user in (owner, admin):
        user.email = f"{user.username}@example.test"
        user.save(update_fields=["email"])
    ws = make_team(owner, slug="acme", members={admin: "admin"})

    owner_page = sign_in(owner).page
    invitee = invite_and_join(
        owner_page,
        browser,
        live_server.url,
        ws=ws.slug,
        email="ivy@example.test",
        username="ivy",
        role="member",
    )
    assert Membership.objects.get(workspace=ws, user=invitee).role == "member"

    published = review_conversation(
        sign_in, live_server.url, ws=ws.slug, owner=owner, author=invitee, approvers=[owner, admin]
    )
    assert published.author == invitee
