"""The Skills extension's listing (docs/contract.md §20): a page of ``skills/list`` costs the
same few queries, uncached, however many skills there are (bench/skills_list.py: none cached)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from skills_app.selectors.recall.entries import PAGE, entries, listing
from tests.api.conftest import reset_api_caches
from tests.factories import actor_for, component, make_user, personal_ws, publish

pytestmark = pytest.mark.django_db


def _first_page_queries(actor: Any) -> tuple[int, int]:
    reset_api_caches()
    with CaptureQueriesContext(connection) as captured:
        listed, _ = listing(actor=actor, cursor=None, skills_list=True, published_only=False)
        entries(listed)
    return len(captured), len(listed)


def test_a_page_costs_the_same_queries_for_few_and_many_skills() -> None:
    user = make_user()
    ws = personal_ws(user)
    actor = actor_for(user)

    def add(first: int, last: int) -> None:
        for index in range(first, last):
            files = (component("references/a.md", f"# {index}\n"), component("b/c.txt", "c"))
            publish(user, ws, slug=f"skill-{index:03d}", components=files)

    add(0, 3)
    few, listed_few = _first_page_queries(actor)
    add(3, PAGE + 20)
    many, listed_many = _first_page_queries(actor)
    assert (listed_few, listed_many) == (3, PAGE)
    assert many == few == 6  # skills, their revisions, labels, scans, content and components
