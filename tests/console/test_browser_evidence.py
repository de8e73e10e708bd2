"""The review page's evidence in real headless Chromium (docs/contract.md §22): a proposal's
trigger checks beside the served revision's, the task it now wins from another skill, and the
served revision's outcome rate with a hostile note shown as text."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import expect

from skills_app.access import Actor
from skills_app.domain.bundle import ComponentData
from skills_app.models import SkillRevision
from skills_app.services.outcomes import outcome_report
from tests.console.test_browser import browser, sign_in, team
from tests.factories import let_authors_approve, make_token, publish, save

pytestmark = [pytest.mark.browser, pytest.mark.services]
__all__ = ["browser", "sign_in", "team"]  # fixtures this module uses


def _triggers(*should: str) -> tuple[ComponentData, ...]:
    raw = json.dumps({"should_trigger": list(should), "should_not_trigger": ["plan a sprint"]})
    return (ComponentData("evals/triggers.json", "document", raw.encode(), "application/json"),)


def test_the_review_page_shows_trigger_checks_and_the_served_outcome_rate(
    sign_in: Any, team: dict[str, Any]
) -> None:
    ws, owner = team["ws"], team["owner"]
    let_authors_approve(ws)
    publish(
        owner,
        ws,
        slug="db-restore",
        name="Restore a database",
        description="Restore a postgres database from a backup dump.",
        instruction_body="# Restore\n",
        components=_triggers("restore the postgres database"),
    )
    publish(
        owner,
        ws,
        slug="db-migrate",
        name="Migrate a database schema",
        description="Run database schema migrations before a release.",
        instruction_body="# Migrate\n",
        components=_triggers("run the schema migrations"),
    )
    served = SkillRevision.objects.get(skill__slug="db-restore", state="published")
    token, _ = make_token(owner, workspace=ws, name="ci-agent")
    agent = Actor(user=owner, token=token, via="api")
    note = "<script>document.title='pwned'</script> restored fine"
    outcome_report(actor=agent, revision_id=served.revision_id, outcome="success", note=note)
    proposal = save(
        owner,
        ws,
        slug="db-restore",
        intent="publish",
        name="Restore or migrate a database",
        description="Restore a postgres database from a dump, or run the schema migrations "
        "before a release.",
        instruction_body="# Restore or migrate\n",
        components=_triggers("restore the postgres database"),
    ).revision
    assert proposal.state == "proposed"

    page = sign_in(owner).page
    page.goto(f"/w/{ws.slug}/revisions/{proposal.revision_id}/review/")
    evidence = page.get_by_test_id("evidence")
    expect(evidence.get_by_test_id("trigger-summary")).to_contain_text("Picked first for 1/1")
    expect(evidence.get_by_test_id("trigger-summary")).to_contain_text("was 1/1 (#1)")
    expect(evidence.get_by_test_id("wins-from")).to_contain_text("db-migrate")
    expect(evidence.get_by_test_id("outcome-summary")).to_contain_text("100% success")
    expect(evidence.get_by_test_id("outcome-note")).to_contain_text("<script>")
    assert evidence.locator("script").count() == 0
    assert page.title() != "pwned"
