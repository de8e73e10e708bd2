"""Rate limits count per user and per workspace as well as per token (docs/contract.md §7, §16b):
minting more tokens does not multiply a person's or a team's budget."""

from __future__ import annotations

from typing import Any

import pytest

from skills_app.gateway import ratelimit
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env


@pytest.fixture
def limits(settings: Any) -> None:
    settings.XMEMO_RATE_LIMIT = "3/min"
    settings.XMEMO_RATE_LIMIT_USER = "5/min"
    settings.XMEMO_RATE_LIMIT_WORKSPACE = "7/min"


def _served(responses: list[Any]) -> int:
    assert {r.status_code for r in responses} <= {200, 429}
    return sum(r.status_code == 200 for r in responses)


@pytest.mark.usefixtures("limits")
def test_four_tokens_of_one_user_share_the_users_limit(env: Env, api_for: ApiFactory) -> None:
    tokens = [api_for(env.owner) for _ in range(4)]
    # Each token alone stays under its own limit of 3, yet together they reach the user's 5.
    responses = [api.get("/v1/skills") for api in tokens for _ in range(2)]
    assert _served(responses) == 5
    limited = responses[-1]
    assert limited.status_code == 429
    assert error_code(limited) == "RATE_LIMITED"
    assert 1 <= int(limited["Retry-After"]) <= 60
    # Another person is unaffected.
    other = api_for(env.outsider)
    assert other.get("/v1/skills").status_code == 200
    # The MCP door and the lean recall view count in the same user bucket.
    assert api_for(env.owner).get("/v1/recall", {"query": "x"}).status_code == 429


@pytest.mark.usefixtures("limits")
def test_tokens_of_one_workspace_share_the_workspaces_limit(env: Env, api_for: ApiFactory) -> None:
    """Workspace tokens (service accounts) and tokens restricted to the team count against it."""
    members = [env.owner, env.admin, env.member, env.member2]
    tokens = [api_for(user, workspace=env.team) for user in members]
    responses = [api.get("/v1/skills") for api in tokens for _ in range(2)]
    assert _served(responses) == 7
    # An unrestricted token of a team member acts through its user bucket only.
    assert api_for(env.member2).get("/v1/skills").status_code == 200


@pytest.mark.usefixtures("limits")
def test_the_user_bucket_holds_across_processes(
    env: Env, api_for: ApiFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two limiters stand for two worker processes: the user's count lives in the shared cache
    (Redis where configured), so tokens spread over both still share one budget."""
    processes = [ratelimit.RateLimiter(), ratelimit.RateLimiter()]
    tokens = [api_for(env.owner) for _ in range(4)]
    responses = []
    for i, api in enumerate(tokens * 2):
        monkeypatch.setattr(ratelimit, "limiter", processes[i % 2])
        responses.append(api.get("/v1/skills"))
    assert _served(responses) == 5
