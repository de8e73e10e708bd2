"""``GET /mcp`` (the optional server-to-client event stream of streamable HTTP) is not offered by
this stateless server: it answers 405 at once rather than holding a stream open forever, as the
MCP transport specification allows."""

from __future__ import annotations

import httpx
import pytest

from tests.factories import make_token, make_user
from tests.mcp.conftest import bearer, with_mcp

pytestmark = pytest.mark.django_db(transaction=True)


def test_get_with_a_valid_token_answers_405_at_once(live_url: str) -> None:
    _, secret = make_token(make_user())
    with httpx.Client(timeout=httpx.Timeout(5.0)) as client:
        answer = client.get(
            f"{live_url}/mcp", headers={**bearer(secret), "Accept": "text/event-stream"}
        )
    assert answer.status_code == 405
    assert "POST" in answer.headers["Allow"]
    assert answer.json()["error"]["code"] == "METHOD_NOT_ALLOWED"


def test_get_without_a_token_is_still_asked_to_authenticate(live_url: str) -> None:
    answer = httpx.get(f"{live_url}/mcp", headers={"Accept": "text/event-stream"}, timeout=5.0)
    assert answer.status_code == 401
    assert answer.headers["WWW-Authenticate"].startswith("Bearer")


def test_the_sdk_client_still_lists_tools(live_url: str) -> None:
    _, secret = make_token(make_user())
    result = with_mcp(live_url, secret, lambda client: client.list_tools())
    assert {tool.name for tool in result.tools} == {
        "recall_cloud_skill",
        "save_cloud_skill",
        "report_skill_outcome",
    }
