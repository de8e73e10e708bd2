"""One audit filter: REST and the console answer the same filters with the same entries.

The action rule is REST's: an exact action or a dotted prefix (``skills.revision`` matches
``skills.revision.approve``; ``skills.rev`` matches nothing). Both doors apply it through
``selectors.accounts.audit_entries``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from skills_app.models import AuditEntry
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env

DAY = timezone.make_aware(datetime(2026, 3, 10, 12, 0))

ENTRIES = [
    # action, actor label, target id, days before DAY
    ("skills.revision.approve", "alice", "rev_1", 0),
    ("skills.revision.create", "bob", "rev_2", 1),
    ("skills.revisions.bulk", "alice", "rev_3", 2),
    ("skills.import.directory", "Alice", "skill_9", 3),
    ("tokens.create", "bob", "tok_1", 5),
    ("skills.revision", "carol", "rev_4", 6),
]


@pytest.fixture
def audited(env: Env) -> Env:
    AuditEntry.objects.filter(workspace=env.team).delete()
    for action, actor, target, days in ENTRIES:
        entry = AuditEntry.objects.create(
            workspace=env.team, action=action, actor_label=actor, target_id=target
        )
        AuditEntry.objects.filter(pk=entry.pk).update(created_at=DAY - timedelta(days=days))
    return env


def _rest(api: Any, env: Env, query: dict[str, str]) -> list[tuple[str, str, str]]:
    answer = api.get(f"/v1/workspaces/{env.team.slug}/audit", {**query, "limit": 100})
    assert answer.status_code == 200, answer.content
    return [(e["action"], e["actor"], e["target_id"]) for e in answer.json()["results"]]


def _console(client: Client, env: Env, query: dict[str, str]) -> list[tuple[str, str, str]]:
    page = client.get(reverse("console:audit", args=[env.team.slug]), query)
    assert page.status_code == 200, page.content
    return [(e.action, e.actor_label, e.target_id) for e in page.context["page"].object_list]


FILTERS: list[tuple[dict[str, str], set[str]]] = [
    ({}, {"rev_1", "rev_2", "rev_3", "skill_9", "tok_1", "rev_4"}),
    ({"action": "skills.rev"}, set()),
    ({"action": "skills.revision"}, {"rev_1", "rev_2", "rev_4"}),
    ({"action": "skills.revision."}, {"rev_1", "rev_2", "rev_4"}),
    ({"action": " skills.revision.approve "}, {"rev_1"}),
    ({"action": "skills"}, {"rev_1", "rev_2", "rev_3", "skill_9", "rev_4"}),
    ({"actor": "alice"}, {"rev_1", "rev_3", "skill_9"}),
    ({"target": "rev_2"}, {"rev_2"}),
    ({"since": "2026-03-08"}, {"rev_1", "rev_2", "rev_3"}),
    ({"until": "2026-03-07"}, {"skill_9", "tok_1", "rev_4"}),
    ({"since": "2026-03-05", "until": "2026-03-09", "actor": "bob"}, {"tok_1", "rev_2"}),
    ({"action": "skills.revision", "actor": "ALICE"}, {"rev_1"}),
]


@pytest.mark.parametrize(("query", "targets"), FILTERS)
def test_rest_and_console_answer_an_audit_filter_alike(
    audited: Env, api_for: ApiFactory, query: dict[str, str], targets: set[str]
) -> None:
    console = Client()
    console.force_login(audited.owner)
    over_rest = _rest(api_for(audited.owner), audited, query)
    over_console = _console(console, audited, query)
    assert over_rest == over_console
    assert {target for _, _, target in over_rest} == targets


def test_a_bad_audit_filter_is_a_400_over_rest_and_a_field_error_in_the_console(
    audited: Env, api_for: ApiFactory
) -> None:
    api = api_for(audited.owner)
    url = f"/v1/workspaces/{audited.team.slug}/audit"
    bad_date = api.get(url, {"since": "yesterday"})
    assert bad_date.status_code == 400
    assert error_code(bad_date) == "VALIDATION_ERROR"
    assert bad_date.json()["error"]["details"]["field"] == "since"
    too_long = api.get(url, {"action": "a" * 65})
    assert too_long.status_code == 400
    assert too_long.json()["error"]["details"]["field"] == "action"
    console = Client()
    console.force_login(audited.owner)
    page = console.get(reverse("console:audit", args=[audited.team.slug]), {"action": "a" * 65})
    assert page.status_code == 400
    assert b"limited to 64 characters" in page.content
    assert list(page.context["page"].object_list) == []
