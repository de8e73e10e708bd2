"""Console pages: a page's query count stays at or under its budget and does not grow with the
number of revisions, labels or components it lists (no N+1)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from skills_app.models import Skill
from skills_app.services.labels import label_move
from tests.factories import Env, actor_for, component, publish, save

pytestmark = pytest.mark.django_db

# Each page's queries: (skill page) 31 when the view assembled its own page, 23 with its page
# selector; (diff page) 19, then 12.
BUDGETS = {"skill_detail": 23, "skill_diff": 12}
# The review page: 29 while it assembled its own page, 24 with its page selector.
REVIEW_BUDGET = 24


def _skill_with(env: Env, revisions: int) -> Skill:
    """A team skill with ``revisions`` revisions (the first published, the last proposed), a
    label and a component on the first."""
    first = publish(env.owner, env.team, slug="deploy", components=(component("a.md", "a"),))
    skill = first.revision.skill
    for n in range(1, revisions - 1):
        save(env.owner, env.team, slug="deploy", instruction_body=f"# {n}\n")
    if revisions > 1:
        save(env.member, env.team, slug="deploy", intent="publish", instruction_body="# last\n")
    label_move(
        actor=actor_for(env.owner), skill=skill, name="prod", revision_id=first.revision.revision_id
    )
    return skill


def _queries(client: Client, path: str) -> int:
    client.get(path)  # warm the per-process caches (sessions, the user)
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(path)
    assert response.status_code == 200, response.content[:500]
    return len(ctx.captured_queries)


@pytest.mark.parametrize("page", sorted(BUDGETS))
@pytest.mark.parametrize("revisions", [2, 6], ids=["two-revisions", "six-revisions"])
def test_a_skill_page_keeps_its_query_budget(
    owner_client: Client, env: Env, page: str, revisions: int
) -> None:
    skill = _skill_with(env, revisions)
    path = reverse(f"console:{page}", args=(env.team.slug, skill.skill_id))
    assert _queries(owner_client, path) <= BUDGETS[page]


def test_the_skill_page_costs_the_same_for_many_revisions(owner_client: Client, env: Env) -> None:
    few = _skill_with(env, 2)
    few_path = reverse("console:skill_detail", args=(env.team.slug, few.skill_id))
    few_count = _queries(owner_client, few_path)
    many = publish(env.owner, env.team, slug="many").revision.skill
    for n in range(6):
        save(env.owner, env.team, slug="many", instruction_body=f"# {n}\n")
    many_path = reverse("console:skill_detail", args=(env.team.slug, many.skill_id))
    assert _queries(owner_client, many_path) == few_count


def test_the_review_page_keeps_its_query_budget(owner_client: Client, env: Env) -> None:
    """The review page from its page selector: one pass through the gate, every read after it
    takes the revision or its skill (REVIEW_BUDGET queries, as many for six revisions as two)."""
    counts = []
    for revisions, slug in ((2, "deploy"), (6, "ship")):
        first = publish(env.owner, env.team, slug=slug, components=(component("a.md", "a"),))
        for n in range(1, revisions - 1):
            save(env.owner, env.team, slug=slug, instruction_body=f"# {n}\n")
        proposed = save(env.member, env.team, slug=slug, intent="publish", instruction_body="# x\n")
        assert first.revision.skill_id == proposed.revision.skill_id
        path = reverse("console:review", args=(env.team.slug, proposed.revision.revision_id))
        counts.append(_queries(owner_client, path))
    assert counts[0] == counts[1]
    assert counts[0] <= REVIEW_BUDGET
