"""The one-step tool call (mcp/fast.py) answers exactly what the SDK's dispatch answers.

Each request goes to the live server twice, with the fast path on and off
(``XMEMO_MCP_FAST_PATH``); status, headers that matter and body bytes must be equal. The calls
cover a recall, a tool error, an argument error, a tool the profile hides, a tool that does not
exist, headers the SDK's ladder refuses, and bad tokens. A counter on ``fast.answer`` shows which
requests the fast path answered and which it handed to the SDK.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from mcp_types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY

from skills_app.mcp import fast
from tests.factories import make_token, make_user, personal_ws, publish
from tests.mcp.conftest import with_mcp

pytestmark = pytest.mark.django_db(transaction=True)

VERSION = "2026-07-28"
RECALL = "recall_cloud_skill"


def _body(name: str, arguments: Any, *, meta: bool = True, request_id: int = 7) -> str:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta:
        params["_meta"] = {PROTOCOL_VERSION_META_KEY: VERSION, CLIENT_CAPABILITIES_META_KEY: {}}
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    )


def _headers(secret: str | None, name: str = RECALL, **extra: str) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
        **extra,
    }
    if secret is not None:
        headers["Authorization"] = f"Bearer {secret}"
    return headers


@pytest.fixture
def answered(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Per request the fast path saw: whether it answered it itself."""
    seen: list[bool] = []
    original = fast.answer

    async def counting(*args: Any, **kwargs: Any) -> Any:
        response = await original(*args, **kwargs)
        seen.append(response is not None)
        return response

    monkeypatch.setattr(fast, "answer", counting)
    return seen


def _both(live_url: str, settings: Any, body: str, headers: dict[str, str]) -> httpx.Response:
    """POST once with the fast path on, once off; the two answers must be identical."""
    answers = []
    for on in (True, False):
        settings.XMEMO_MCP_FAST_PATH = on
        answers.append(httpx.post(f"{live_url}/mcp", content=body, headers=headers, timeout=30))
    fast_answer, sdk_answer = answers
    assert fast_answer.status_code == sdk_answer.status_code, (fast_answer.text, sdk_answer.text)
    assert fast_answer.content == sdk_answer.content
    for header in ("content-type", "www-authenticate"):
        assert fast_answer.headers.get(header) == sdk_answer.headers.get(header)
    return fast_answer


def test_a_recall_is_answered_in_one_step_exactly_as_the_sdk_answers_it(
    live_url: str, settings: Any, answered: list[bool]
) -> None:
    user = make_user()
    revision = publish(user, personal_ws(user), slug="deploy").revision
    _, secret = make_token(user)
    reply = _both(live_url, settings, _body(RECALL, {"slug": "deploy"}), _headers(secret))
    result = reply.json()["result"]
    assert result["structuredContent"]["data"]["revision_id"] == revision.revision_id
    assert result["isError"] is False
    assert result["resultType"] == "complete"
    assert answered == [True]  # the second request ran with the path off


@pytest.mark.parametrize(
    ("arguments", "code"),
    [({"slug": "no-such-skill"}, "NOT_FOUND"), ({"slug": 5}, "VALIDATION_ERROR")],
    ids=["tool-error", "argument-error"],
)
def test_tool_errors_are_the_sdks_tool_errors(
    live_url: str, settings: Any, answered: list[bool], arguments: Any, code: str
) -> None:
    user = make_user()
    _, secret = make_token(user)
    reply = _both(live_url, settings, _body(RECALL, arguments), _headers(secret))
    assert reply.json()["result"]["isError"] is True
    assert reply.json()["result"]["structuredContent"]["error"]["code"] == code
    assert answered == [True]


@pytest.mark.parametrize(
    ("name", "profile"),
    [(RECALL, "generic-public"), ("no_such_tool", "ordinary-full")],
    ids=["hidden-by-profile", "unknown"],
)
def test_a_tool_the_caller_cannot_see_is_left_to_the_sdk(
    live_url: str, settings: Any, answered: list[bool], name: str, profile: str
) -> None:
    user = make_user()
    _, secret = make_token(user, profile=profile)
    body = _body(name, {"slug": "deploy", "content": "x"})
    reply = _both(live_url, settings, body, _headers(secret, name=name))
    assert "error" in reply.json()
    assert answered == [False]


@pytest.mark.parametrize(
    ("body_kwargs", "headers"),
    [
        ({"meta": False}, {}),  # the 2026-07-28 envelope keys are missing
        ({}, {"Mcp-Name": "save_cloud_skill"}),  # routing header disagrees with the body
        ({}, {"Accept": "text/html"}),
        ({}, {"Mcp-Method": "tools/list"}),  # routing header names another method
    ],
    ids=["no-envelope", "name-mismatch", "accept", "method-mismatch"],
)
def test_what_the_sdk_refuses_it_refuses_unchanged(
    live_url: str, settings: Any, answered: list[bool], body_kwargs: Any, headers: Any
) -> None:
    user = make_user()
    publish(user, personal_ws(user), slug="deploy")
    _, secret = make_token(user)
    header_set = {**_headers(secret), **headers}
    reply = _both(live_url, settings, _body(RECALL, {"slug": "deploy"}, **body_kwargs), header_set)
    assert reply.status_code >= 400 or "error" in reply.json()
    assert True not in answered  # handed to the SDK, or not even read (headers alone)


@pytest.mark.parametrize("secret", [None, "xm_" + "0" * 43], ids=["missing", "unknown"])
def test_a_bad_token_is_refused_with_the_same_401(
    live_url: str, settings: Any, secret: str | None
) -> None:
    reply = _both(live_url, settings, _body(RECALL, {"slug": "deploy"}), _headers(secret))
    assert reply.status_code == 401
    assert "resource_metadata" in reply.headers["www-authenticate"]


def test_a_tool_that_breaks_fails_as_the_sdk_fails_it(
    live_url: str, settings: Any, answered: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    from skills_app.mcp import tools

    def broken(actor: Any, arguments: Any) -> Any:
        raise RuntimeError("a bug, not for the wire")

    monkeypatch.setitem(tools.SERVED_TOOLS, RECALL, broken)
    _, secret = make_token(make_user())
    reply = _both(live_url, settings, _body(RECALL, {"slug": "deploy"}), _headers(secret))
    assert reply.json()["error"]["message"] == "Internal server error"
    assert "a bug" not in reply.text
    assert answered == [True]


def test_the_sdk_clients_own_calls_take_the_one_step_path(
    live_url: str, answered: list[bool]
) -> None:
    """What agents send (the SDK client, default mode) is what the path answers."""
    user = make_user()
    revision = publish(user, personal_ws(user), slug="deploy").revision
    _, secret = make_token(user)
    result = with_mcp(live_url, secret, lambda c: c.call_tool(RECALL, {"slug": "deploy"}))
    assert result.structured_content["data"]["revision_id"] == revision.revision_id
    assert answered == [True]
