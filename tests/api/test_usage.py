"""``GET /v1/skills/{skill_id}/usage`` (docs/contract.md §19): Level 1 and Level 2 answers
counted per revision, day and client, through REST and MCP alike; another tenant hears 404."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from skills_app.access import Actor
from skills_app.selectors.recall import recall
from tests.api.conftest import Api, ApiFactory, error_code
from tests.factories import Env, make_token, publish, save
from tests.usage import flush_usage

NO_OUTCOMES = {"success": 0, "partial": 0, "failure": 0, "rate": None}


def _level1(api: Api, **headers: str) -> Any:
    return api.get("/v1/recall", {"slug": "counted"}, **headers)


def test_usage_counts_each_answer_per_revision_day_and_client(
    env: Env, api_for: ApiFactory
) -> None:
    first = publish(env.owner, env.personal, slug="counted").revision
    _, secret = make_token(env.owner, name="ci-agent")
    agent = Api(Client(), secret)
    sent = _level1(agent)
    assert sent.status_code == 200
    # A 304 is a recall served: the agent holds the instructions and is using them.
    assert _level1(agent, **{"If-None-Match": sent["ETag"]}).status_code == 304
    assert _level1(agent).status_code == 200
    for _ in range(2):
        level2 = agent.get(
            "/v1/recall",
            {"slug": "counted", "revision_id": first.revision_id, "resource": "templates/t.md"},
        )
        assert level2.status_code == 200
    # Not counted: a search (Level 0), an answer that failed.
    assert agent.get("/v1/recall", {"query": "deploy"}).status_code == 200
    assert agent.get("/v1/recall", {"slug": "missing"}).status_code == 404

    second = publish(env.owner, env.personal, slug="counted", instruction_body="v2").revision
    # The MCP door counts at the same point (its tool calls the same selector).
    mcp_token, _ = make_token(env.owner, name="OAuth: Claude")
    mcp = Actor(user=env.owner, token=mcp_token, via="mcp")
    recall(actor=mcp, slug="counted")
    recall(actor=mcp, slug="counted", revision_id=first.revision_id)
    flush_usage()

    body = agent.get(f"/v1/skills/{first.skill.skill_id}/usage").json()
    today = timezone.now().date()
    assert len(body["days"]) == 30
    assert body["days"][-1] == {"date": today.isoformat(), "level1": 5, "level2": 2}
    assert body["days"][0] == {
        "date": (today - timedelta(days=29)).isoformat(),
        "level1": 0,
        "level2": 0,
    }
    assert body["by_revision"] == [
        {
            "revision_id": second.revision_id,
            "revision_number": 2,
            "level1": 1,
            "level2": 0,
            "outcomes": NO_OUTCOMES,
        },
        {
            "revision_id": first.revision_id,
            "revision_number": 1,
            "level1": 4,
            "level2": 2,
            "outcomes": NO_OUTCOMES,
        },
    ]
    assert body["by_client"] == [
        {"name": "ci-agent", "level1": 3, "level2": 2, "outcomes": NO_OUTCOMES},
        {"name": "OAuth: Claude", "level1": 2, "level2": 0, "outcomes": NO_OUTCOMES},
    ]
    last = body["last_recalled_at"]
    assert last is not None
    assert abs((timezone.now() - _parse(last)).total_seconds()) < 60

    # Counts add: a second flush of new answers lands on the same rows; a flush with nothing
    # new writes nothing (every count is stored once).
    _level1(agent)
    assert flush_usage() == 1
    assert flush_usage() == 0
    again = agent.get(f"/v1/skills/{first.skill.skill_id}/usage", {"days": "1"}).json()
    assert again["days"] == [{"date": today.isoformat(), "level1": 6, "level2": 2}]


def _parse(value: str) -> Any:
    from datetime import datetime

    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def test_a_skill_never_recalled_has_empty_usage(env: Env, api_for: ApiFactory) -> None:
    skill = save(env.owner, env.personal, slug="quiet").revision.skill
    body = api_for(env.owner).get(f"/v1/skills/{skill.skill_id}/usage", {"days": "7"}).json()
    assert body["last_recalled_at"] is None
    assert [day["level1"] + day["level2"] for day in body["days"]] == [0] * 7
    assert body["by_revision"] == []
    assert body["by_client"] == []


def test_usage_is_tenant_gated_and_checks_days(env: Env, api_for: ApiFactory) -> None:
    skill = publish(env.owner, env.personal, slug="counted").revision.skill
    stranger = api_for(env.outsider).get(f"/v1/skills/{skill.skill_id}/usage")
    assert stranger.status_code == 404
    assert error_code(stranger) == "NOT_FOUND"
    owner = api_for(env.owner)
    for days in ("0", "91", "many", "-3"):
        refused = owner.get(f"/v1/skills/{skill.skill_id}/usage", {"days": days})
        assert refused.status_code == 400, days
        assert error_code(refused) == "VALIDATION_ERROR"
    assert owner.get(f"/v1/skills/{skill.skill_id}/usage", {"days": "90"}).status_code == 200


@pytest.mark.parametrize("scopes", [["skills:write"]])
def test_usage_needs_the_read_scope(env: Env, api_for: ApiFactory, scopes: list[str]) -> None:
    skill = publish(env.owner, env.personal, slug="counted").revision.skill
    answer = api_for(env.owner, scopes).get(f"/v1/skills/{skill.skill_id}/usage")
    assert answer.status_code == 403


def test_a_refused_render_is_not_counted(env: Env, api_for: ApiFactory) -> None:
    """A Level 1 answer refused as too large once rendered never reached the agent."""
    skill = publish(
        env.owner, env.personal, slug="bomb", instruction_body="$ARGUMENTS" * 6_000
    ).revision.skill
    api = api_for(env.owner)
    refused = api.get("/v1/recall", {"slug": "bomb", "arguments": "x" * 1_000})
    assert refused.status_code == 413
    assert api.get("/v1/recall", {"slug": "bomb", "arguments": "y"}).status_code == 200
    flush_usage()
    body = api.get(f"/v1/skills/{skill.skill_id}/usage", {"days": "1"}).json()
    assert body["days"][0]["level1"] == 1
