"""A client that goes away before its request is read whole is nobody's error: the MCP door
returns quietly instead of raising into the server (which logs it as an application error)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from asgiref.sync import sync_to_async
from django.db import connections
from starlette.requests import ClientDisconnect

from skills_app.mcp import fast
from skills_app.mcp.http import _Guarded, _request_actor, transport_security
from skills_app.mcp.server import build_server
from tests.factories import make_token, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_client_disconnect_mid_request_ends_the_request_quietly() -> None:
    _, secret = make_token(make_user())
    reached = []

    async def transport(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["path"])
        raise ClientDisconnect()

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "scheme": "http",
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 50000),
        "headers": [
            (b"host", b"127.0.0.1:8000"),
            (b"authorization", f"Bearer {secret}".encode()),
            (b"content-type", b"application/json"),
        ],
    }
    sent: list[Any] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    kept = fast.Kept()
    try:
        guarded = _Guarded(transport, transport_security(), build_server(_request_actor), kept)
        anyio.run(guarded, scope, receive, send)
    finally:
        kept.close()
        # The token was looked up in asgiref's shared thread: close its connection there.
        anyio.run(sync_to_async(connections.close_all, thread_sensitive=True))
    assert reached == ["/mcp"]  # authenticated and handed over; then nothing to answer
    assert sent == []
