"""The one-step tool call (mcp/fast.py) answers exactly what the SDK's dispatch answers.

Each request goes to the live server twice, with the fast path on and off
(``XMEMO_MCP_FAST_PATH``); status, headers that matter and body bytes must be equal. The calls
cover a recall, a tool error, an argument error, a tool the profile hides, a tool that does not
exist, requests the SDK refuses, and bad tokens, in both protocol eras: the 2026-07-28
per-request envelope and the handshake era's stateless POST. A counter on ``fast.answer`` shows
which requests the fast path answered and which it handed to the SDK.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from skills_app.mcp import fast
from tests.factories import make_token, make_user, personal_ws, publish
from tests.mcp.conftest import MODERN, RECALL, call_body, call_headers, with_mcp

pytestmark = pytest.mark.django_db(transaction=True)

HANDSHAKE = LATEST_HANDSHAKE_VERSION


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
    live_url: str, settings: Any, answered: list[bool], era: str
) -> None:
    user = make_user()
    revision = publish(user, personal_ws(user), slug="deploy", name="Déploiement").revision
    _, secret = make_token(user)
    body, headers = call_body(RECALL, {"slug": "deploy"}, era), call_headers(secret, era=era)
    reply = _both(live_url, settings, body, headers)
    result = reply.json()["result"]
    assert result["structuredContent"]["data"]["revision_id"] == revision.revision_id
    assert result["structuredContent"]["data"]["name"] == "Déploiement"
    assert result["isError"] is False
    # The era's own result surface: 2026-07-28 results carry resultType and the server stamp.
    assert ("resultType" in result) is (era == MODERN)
    assert ("_meta" in result) is (era == MODERN)
    assert answered == [True]  # the second request ran with the path off


def test_a_result_asked_for_again_is_encoded_once_and_answered_byte_for_byte(
    live_url: str, settings: Any, answered: list[bool], era: str
) -> None:
    """The encoded result is kept per process: later calls (other ids, other callers who read
    the same skill) get the same bytes the SDK would send, around their own id."""
    user = make_user()
    publish(user, personal_ws(user), slug="deploy", name="Déploiement")
    _, secret = make_token(user)
    fast.forget_results()
    for request_id in (1, "twice-é", 3):
        body = call_body(RECALL, {"slug": "deploy"}, era, request_id=request_id)
        reply = _both(live_url, settings, body, call_headers(secret, era=era))
        assert reply.json()["id"] == request_id
    assert answered == [True, True, True]
    assert fast.results_kept() == 1


def test_a_recall_sent_before_is_answered_from_rests_bytes_with_no_result_built(
    live_url: str, settings: Any, monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    """The one-step path takes the recall's text from REST's encoded bytes and finds the kept
    result member by it: a recall answered before builds no tool result (no document, no
    encoding, no validation) however many times it is asked for."""
    from skills_app.mcp import server

    user = make_user()
    publish(user, personal_ws(user), slug="deploy", name="Déploiement")
    _, secret = make_token(user)
    fast.forget_results()
    built: list[str] = []

    def counted(name: str, original: Any) -> Any:
        def build(*args: Any) -> Any:
            built.append(name)
            return original(*args)

        return build

    for module in (fast, server):
        for name in ("call_result", "call_result_of_text"):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, counted(name, getattr(module, name)))
    settings.XMEMO_MCP_FAST_PATH = True
    replies = [
        httpx.post(
            f"{live_url}/mcp",
            content=call_body(RECALL, {"slug": "deploy"}, era, request_id=n),
            headers=call_headers(secret, era=era),
            timeout=30,
        )
        for n in (1, 2, 3)
    ]
    assert [r.json()["id"] for r in replies] == [1, 2, 3]
    assert len({r.json()["result"]["structuredContent"]["data"]["name"] for r in replies}) == 1
    assert built == ["call_result_of_text"]  # the first call only


def test_a_handshake_era_call_without_a_version_header_is_answered_as_the_sdk_does(
    live_url: str, settings: Any, answered: list[bool]
) -> None:
    """No MCP-Protocol-Version at all: the SDK assumes its default negotiated version."""
    user = make_user()
    publish(user, personal_ws(user), slug="deploy")
    _, secret = make_token(user)
    headers = call_headers(secret, era=HANDSHAKE)
    del headers["MCP-Protocol-Version"]
    reply = _both(live_url, settings, call_body(RECALL, {"slug": "deploy"}, HANDSHAKE), headers)
    assert reply.json()["result"]["isError"] is False
    assert answered == [True]


@pytest.mark.parametrize(
    ("arguments", "code"),
    [({"slug": "no-such-skill"}, "NOT_FOUND"), ({"slug": 5}, "VALIDATION_ERROR")],
    ids=["tool-error", "argument-error"],
)
def test_tool_errors_are_the_sdks_tool_errors(
    live_url: str, settings: Any, answered: list[bool], arguments: Any, code: str, era: str
) -> None:
    user = make_user()
    _, secret = make_token(user)
    fast.forget_results()
    reply = _both(
        live_url, settings, call_body(RECALL, arguments, era), call_headers(secret, era=era)
    )
    result = reply.json()["result"]
    assert result["isError"] is True
    assert "structuredContent" not in result  # text only: the envelope fits no outputSchema
    assert json.loads(result["content"][0]["text"])["error"]["code"] == code
    assert answered == [True]
    assert fast.results_kept() == 0  # anyone can make new errors: none is kept


@pytest.mark.parametrize(
    ("name", "profile"),
    [(RECALL, "generic-public"), ("no_such_tool", "ordinary-full")],
    ids=["hidden-by-profile", "unknown"],
)
def test_a_tool_the_caller_cannot_see_is_left_to_the_sdk(
    live_url: str, settings: Any, answered: list[bool], name: str, profile: str, era: str
) -> None:
    user = make_user()
    _, secret = make_token(user, profile=profile)
    body = call_body(name, {"slug": "deploy", "content": "x"}, era)
    reply = _both(live_url, settings, body, call_headers(secret, name=name, era=era))
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
    header_set = {**call_headers(secret), **headers}
    reply = _both(
        live_url, settings, call_body(RECALL, {"slug": "deploy"}, **body_kwargs), header_set
    )
    assert reply.status_code >= 400 or "error" in reply.json()
    assert True not in answered  # handed to the SDK, or not even read (headers alone)


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        (None, {"Accept": "text/html"}),
        (None, {"Content-Type": "text/plain"}),
        ("{not json", {}),
        ('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}}', {}),
        ('{"jsonrpc": "2.0", "method": "notifications/initialized"}', {}),
        ('{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}', {}),
        (None, {"MCP-Protocol-Version": "1999-01-01"}),  # an unknown version: the modern entry
    ],
    ids=[
        "accept",
        "content-type",
        "not-json",
        "no-tool-name",
        "notification",
        "other-method",
        "unknown-version",
    ],
)
def test_a_handshake_era_request_it_does_not_answer_goes_to_the_sdk_unchanged(
    live_url: str, settings: Any, answered: list[bool], body: str | None, headers: Any
) -> None:
    user = make_user()
    publish(user, personal_ws(user), slug="deploy")
    _, secret = make_token(user)
    content = body if body is not None else call_body(RECALL, {"slug": "deploy"}, HANDSHAKE)
    _both(live_url, settings, content, {**call_headers(secret, era=HANDSHAKE), **headers})
    assert True not in answered  # handed to the SDK, or not even read (headers alone)


@pytest.mark.parametrize(
    ("header", "answered_here"),
    [("deploy", True), ("other", False)],
    ids=["agrees", "disagrees"],
)
def test_a_declared_mcp_param_header_is_checked_as_the_sdk_checks_it(
    live_url: str,
    settings: Any,
    answered: list[bool],
    tmp_path: Path,
    header: str,
    answered_here: bool,
) -> None:
    """A contract whose tool declares ``x-mcp-header``: a header that disagrees with the body
    is the SDK's to refuse; one that agrees is answered here, as the SDK would answer it."""
    contract = json.loads(Path(settings.XMEMO_MCP_CONTRACT).read_text(encoding="utf-8"))
    contract["tools"][RECALL]["input_schema"]["properties"]["slug"]["x-mcp-header"] = "Slug"
    path = tmp_path / "contract.json"
    path.write_text(json.dumps(contract), encoding="utf-8")
    settings.XMEMO_MCP_CONTRACT = str(path)
    user = make_user()
    publish(user, personal_ws(user), slug="deploy")
    _, secret = make_token(user)
    headers = call_headers(secret, **{"Mcp-Param-Slug": header})
    reply = _both(live_url, settings, call_body(RECALL, {"slug": "deploy"}), headers)
    assert ("result" in reply.json()) is answered_here
    assert answered == [answered_here]


@pytest.mark.parametrize("secret", [None, "xm_" + "0" * 43], ids=["missing", "unknown"])
def test_a_bad_token_is_refused_with_the_same_401(
    live_url: str, settings: Any, secret: str | None, era: str
) -> None:
    body, headers = call_body(RECALL, {"slug": "deploy"}, era), call_headers(secret, era=era)
    reply = _both(live_url, settings, body, headers)
    assert reply.status_code == 401
    assert "resource_metadata" in reply.headers["www-authenticate"]


def test_a_tool_that_breaks_fails_as_the_sdk_fails_it(
    live_url: str, settings: Any, answered: list[bool], monkeypatch: pytest.MonkeyPatch, era: str
) -> None:
    """A generic JSON-RPC error in both eras: nothing of the exception reaches the wire."""
    from skills_app.mcp import tools

    def broken(actor: Any, arguments: Any) -> Any:
        raise RuntimeError("a bug, not for the wire")

    monkeypatch.setitem(tools.SERVED_TOOLS, RECALL, broken)
    monkeypatch.setitem(tools.SERVED_AS_TEXT, RECALL, broken)  # the one-step path's body
    _, secret = make_token(make_user())
    body, headers = call_body(RECALL, {"slug": "deploy"}, era), call_headers(secret, era=era)
    reply = _both(live_url, settings, body, headers)
    assert reply.json()["error"]["message"] == "Internal server error"
    assert "a bug" not in reply.text
    assert answered == [True]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_sdk_clients_own_calls_take_the_one_step_path(
    live_url: str, answered: list[bool], mode: str
) -> None:
    """What agents send (the SDK client, by default and in the handshake era) is what the path
    answers."""
    user = make_user()
    revision = publish(user, personal_ws(user), slug="deploy").revision
    _, secret = make_token(user)
    result = with_mcp(live_url, secret, lambda c: c.call_tool(RECALL, {"slug": "deploy"}), mode)
    assert result.structured_content["data"]["revision_id"] == revision.revision_id
    # The call, and nothing else: initialize, the initialized notification and the listing the
    # legacy client reads for output schemas are the SDK's.
    assert answered.count(True) == 1
