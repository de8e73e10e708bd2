"""Requests to /mcp, served outside Django, logged as Django's are (docs/contract.md §19): one
``xmemo.request`` record each, with route ``mcp``, who asked, the status and the request id sent
back — whichever path answered (the fast path, the SDK, a refusal). The real MCP service is
tested end to end in ``tests/e2e/test_mcp_request_log.py``."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from tests.factories import make_token, make_user, personal_ws, publish
from tests.mcp.conftest import bearer

pytestmark = pytest.mark.django_db(transaction=True)

HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": LATEST_HANDSHAKE_VERSION,
}


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(dict(record.__dict__))

    def of(self, request_id: str) -> list[dict[str, Any]]:
        """The records of ``request_id``, once there is one: the line is written as the
        request ends, just after its answer went out."""
        deadline = time.monotonic() + 10
        while True:
            found = [line for line in self.lines if line.get("request_id") == request_id]
            if found or time.monotonic() > deadline:
                return found
            time.sleep(0.02)


@pytest.fixture
def records() -> Iterator[_Records]:
    # The request logger does not propagate (settings.LOGGING): listen on it directly.
    handler = _Records()
    logger = logging.getLogger("xmemo.request")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _post(url: str, secret: str | None, method: str, request_id: str, **params: Any) -> Any:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    headers = {**HEADERS, **bearer(secret), "X-Request-ID": request_id}
    return httpx.post(f"{url}/mcp", content=body, headers=headers, timeout=30)


@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "sdk"])
def test_a_tool_call_is_logged_with_its_caller_and_request_id(
    live_url: str, records: _Records, settings: Any, fast: bool
) -> None:
    """Asked three times: the fast path's later answers are sent again from the event loop
    (``fast.Kept``) and logged as fully as the first."""
    settings.XMEMO_MCP_FAST_PATH = fast
    user = make_user("mcplog")
    token, secret = make_token(user)
    publish(user, personal_ws(user), slug="traced")
    for n in range(1, 4):
        rid = f"agent.{'fast' if fast else 'sdk'}-{n}"
        arguments = {"slug": "traced"}
        sent = _post(
            live_url, secret, "tools/call", rid, name="recall_cloud_skill", arguments=arguments
        )
        assert sent.status_code == 200, sent.text
        assert sent.json()["result"]["isError"] is False
        assert sent.headers["X-Request-ID"] == rid
        (line,) = records.of(rid)
        assert (line["method"], line["route"], line["status"]) == ("POST", "mcp", 200)
        assert line["token_id"] == token.token_id
        # The token's own workspace is none (a person's token); the recall names the skill's.
        if fast:
            assert line["workspace"] == "mcplog"
        assert line["duration_ms"] > 0
        assert secret not in json.dumps(line, default=str)


def test_a_refusal_is_logged_and_an_insane_request_id_replaced(
    live_url: str, records: _Records
) -> None:
    listed = _post(live_url, None, "tools/list", 'a b"}{forged')
    assert listed.status_code == 401
    rid = listed.headers["X-Request-ID"]
    assert rid != 'a b"}{forged'
    assert 8 <= len(rid) <= 64
    (line,) = records.of(rid)
    assert (line["route"], line["status"], line["token_id"]) == ("mcp", 401, None)
