"""The MCP service's requests logged and counted as gunicorn's are (docs/contract.md §19): one
JSON line per request to /mcp, its X-Request-ID honoured or made and sent back, and the request
histogram of ``/metrics`` — for tool calls the fast path answers and for what the SDK answers."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from tests.e2e.processes import (
    free_port,
    mcp_service,
    process_env,
    require_production_services,
    running,
)
from tests.e2e.test_metrics import METRICS_TOKEN, _samples, _value
from tests.e2e.test_request_log import _wait_lines
from tests.factories import make_token, make_user, personal_ws, publish

HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": LATEST_HANDSHAKE_VERSION,
}


def _rpc(method: str, params: dict | None = None) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}})


@pytest.mark.django_db(transaction=True)
def test_each_mcp_request_logs_one_json_line_and_is_counted(tmp_path: Path) -> None:
    require_production_services()
    user = make_user("mcplogged")
    token, secret = make_token(user)
    publish(user, personal_ws(user), slug="traced")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "mcp.log"
    env = process_env(XMEMO_METRICS_TOKEN=METRICS_TOKEN)
    auth = {**HEADERS, "Authorization": f"Bearer {secret}"}
    with running(mcp_service(port), env=env, ready_url=f"{base}/healthz", log=log):
        # A recall: the fast path (mcp/fast.py) answers it.
        call = _rpc("tools/call", {"name": "recall_cloud_skill", "arguments": {"slug": "traced"}})
        sent = httpx.post(
            f"{base}/mcp", content=call, headers={**auth, "X-Request-ID": "agent-7f3a.01"}
        )
        assert sent.status_code == 200, sent.text
        assert sent.json()["result"]["isError"] is False
        assert sent.headers["X-Request-ID"] == "agent-7f3a.01"
        (line,) = _wait_lines(log, "request_id", "agent-7f3a.01", 1)
        assert line["method"] == "POST"
        assert line["route"] == "mcp"
        assert line["status"] == 200
        assert isinstance(line["duration_ms"], float)
        assert line["duration_ms"] > 0
        assert line["token_id"] == token.token_id
        assert line["workspace"] == "mcplogged"

        # A listing: the SDK answers it.
        listed = httpx.post(
            f"{base}/mcp", content=_rpc("tools/list"), headers={**auth, "X-Request-ID": "sdk-1"}
        )
        assert listed.status_code == 200, listed.text
        assert "tools" in listed.json()["result"]
        assert listed.headers["X-Request-ID"] == "sdk-1"
        (sdk,) = _wait_lines(log, "request_id", "sdk-1", 1)
        assert (sdk["route"], sdk["status"], sdk["token_id"]) == ("mcp", 200, token.token_id)

        # No token: refused before any MCP message is read, logged all the same; an id that is
        # not sane is replaced by a fresh one.
        refused = httpx.post(
            f"{base}/mcp/", content=call, headers={**HEADERS, "X-Request-ID": 'a b"}{forged'}
        )
        assert refused.status_code == 401
        rid = refused.headers["X-Request-ID"]
        assert rid != 'a b"}{forged'
        assert 8 <= len(rid) <= 64
        (unauth,) = _wait_lines(log, "request_id", rid, 1)
        assert (unauth["route"], unauth["status"], unauth["token_id"]) == ("mcp", 401, None)
        assert secret not in log.read_text()

        scraped = httpx.get(f"{base}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
        assert scraped.status_code == 200, scraped.text
        samples = _samples(scraped.text)
        request = "xmemo_http_request_duration_seconds_count"
        assert _value(samples, request, route="mcp", method="POST", status="200") == 2
        assert _value(samples, request, route="mcp", method="POST", status="401") == 1
        assert _value(samples, "xmemo_recalls_total", level="1", door="mcp") == 1
