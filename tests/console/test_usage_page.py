"""Usage in the console (docs/contract.md §19): the skill page draws recalls per day as SVG
(no script) with the per-revision and per-client figures; the list shows the last recall."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from skills_app.access import Actor
from skills_app.selectors.recall import recall
from tests.factories import Env, make_token, publish, save
from tests.usage import flush_usage

pytestmark = pytest.mark.django_db


def test_the_skill_page_charts_usage_and_the_list_shows_the_last_recall(
    env: Env, owner_client: Client
) -> None:
    revision = publish(env.owner, env.personal, slug="charted").revision
    save(env.owner, env.personal, slug="alpha")
    token, _ = make_token(env.owner, name="nightly-agent")
    agent = Actor(user=env.owner, token=token, via="api")
    for _ in range(3):
        recall(actor=agent, slug="charted")
    recall(actor=agent, slug="charted", revision_id=revision.revision_id, resource="templates/t.md")
    flush_usage()

    skill_id = revision.skill.skill_id
    page = owner_client.get(
        reverse("console:skill_detail", args=[env.personal.slug, skill_id])
    ).content.decode()
    usage = page[page.index('data-testid="usage"') :]
    chart = usage[usage.index("<svg") : usage.index("</svg>")]
    # 30 days, one bar pair each; today's Level 1 bar is the tallest there is.
    assert len(re.findall(r'<rect class="bar-l1"', chart)) == 30
    assert "<script" not in usage[: usage.index("</section>")]
    heights = [float(h) for h in re.findall(r'class="bar-l1"[^>]* height="([\d.]+)"', chart)]
    assert heights[-1] == max(heights) > 0
    assert heights[:-1] == [0.0] * 29
    assert "<title>" in chart  # each day says its figures to a screen reader and on hover
    assert re.search(r"nightly-agent</td>\s*<td[^>]*>3</td>\s*<td[^>]*>1</td>", usage)
    assert re.search(r"#1</a></td>\s*<td[^>]*>3</td>\s*<td[^>]*>1</td>", usage)

    listing = owner_client.get(reverse("console:skill_list", args=[env.personal.slug]))
    text = listing.content.decode()
    charted = text[text.index(">charted<") :]
    assert "Last recall" in charted
    assert re.search(r'<dd data-testid="last-recall"><time datetime="\d{4}-', charted)
    never = text[text.index(">alpha<") :]
    assert re.search(r'<dd data-testid="last-recall"><span class="muted">never</span>', never)
    assert text.index(">alpha<") < text.index(">charted<")  # by slug unless asked
    # Sorted by last recall: the recalled skill first, the never-recalled (stale) after it.
    recent = owner_client.get(
        reverse("console:skill_list", args=[env.personal.slug]), {"sort": "recalled"}
    ).content.decode()
    assert recent.index(">charted<") < recent.index(">alpha<")
