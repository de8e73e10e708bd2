"""The recall guards of docs/contract.md §2 and §5 hold over MCP exactly as over REST, with the SDK
client.

Each test is an attack an agent could make through ``recall_cloud_skill`` / ``save_cloud_skill``:
reading unreviewed team text by slug or by search, reading a switched-off workspace, and asking
for a rendered body hundreds of megabytes large.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from skills_app.domain.limits import MAX_BODY_BYTES
from skills_app.models import SkillRevision
from skills_app.services.skills import revision_transition
from tests.factories import actor_for, make_team, make_user, personal_ws, publish, save
from tests.mcp.conftest import tool_answer, with_mcp
from tests.mcp.test_http import RECALL, SAVE, _assert_recall_like_rest, _token

pytestmark = pytest.mark.django_db(transaction=True)


def _error(result: types.CallToolResult) -> str:
    assert result.is_error
    return str(tool_answer(RECALL, result)["error"]["code"])


def test_unreviewed_team_revisions_never_reach_agents_over_mcp(live_url: str) -> None:
    owner, admin, member, agent = (make_user() for _ in range(4))
    team = make_team(owner, members={admin: "admin", member: "member", agent: "member"})
    team.require_distinct_reviewer = True
    team.save()
    reviewed = save(member, team, slug="deploy", intent="publish").revision
    revision_transition(actor=actor_for(owner), revision=reviewed, action="approve")

    async def propose(client: Client) -> list[types.CallToolResult]:
        common: dict[str, Any] = {
            "workspace": team.slug,
            "description": "Unreviewed.",
            "instruction_body": "UNREVIEWED steps.",
            "intent": "publish",
        }
        return [
            await client.call_tool(SAVE, {**common, "slug": "deploy", "name": "Deploy"}),
            await client.call_tool(SAVE, {**common, "slug": "numbat", "name": "Numbat"}),
        ]

    saved = with_mcp(live_url, _token(admin), propose)
    assert [r.structured_content["state"] for r in saved] == ["proposed", "proposed"]
    revision_transition(actor=actor_for(admin), revision=reviewed, action="deprecate")
    proposal_id = saved[0].structured_content["revision_id"]

    results = _assert_recall_like_rest(
        live_url,
        _token(agent),
        [
            {"slug": f"{team.slug}/deploy"},
            {"slug": "deploy", "fallback": "latest"},
            {"slug": "numbat"},
            {"query": "unreviewed"},
            {"query": "numbat"},
            {"slug": "deploy", "revision_id": proposal_id},
        ],
    )
    assert [_error(r) for r in results[:3]] == ["NO_PUBLISHED_REVISION"] * 3
    assert [r.structured_content["data"]["results"] for r in results[3:5]] == [[], []]
    pinned = results[5].structured_content["data"]
    assert (pinned["resolved_by"], pinned["state"]) == ("pinned", "proposed")
    assert SkillRevision.objects.get(revision_id=proposal_id).state == "proposed"


def test_switched_off_workspaces_answer_feature_disabled_over_mcp(live_url: str) -> None:
    user = make_user()
    ws = personal_ws(user)
    publish(user, ws)
    ws.cloud_skills_enabled = False
    ws.save()
    results = _assert_recall_like_rest(
        live_url,
        _token(user),
        [{"query": "deploy"}, {"slug": "deploy"}, {"slug": "never-existed"}],
    )
    assert [_error(r) for r in results] == ["FEATURE_DISABLED"] * 3


def test_an_amplifying_body_is_refused_over_mcp(live_url: str) -> None:
    user = make_user()
    publish(
        user,
        personal_ws(user),
        slug="bomb",
        instruction_body="$ARGUMENTS" * (MAX_BODY_BYTES // 10),
        components=(),
    )
    [result] = _assert_recall_like_rest(
        live_url, _token(user), [{"slug": "bomb", "arguments": "x" * 10_000}]
    )
    assert _error(result) == "RENDERED_TOO_LARGE"
    assert len(result.content[0].text) < 1024
