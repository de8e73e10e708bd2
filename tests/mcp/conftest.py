"""A real uvicorn server on loopback serving ``xmemo.asgi:application`` (console, REST and /mcp
on one origin), and the ``mcp`` SDK's own client to talk to it.

The server runs in a thread of the test process, so it uses the test database; tests that talk
to it use ``django_db(transaction=True)`` so what they write is committed and visible to it.
"""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import httpx
import httpx2
import jsonschema
import mcp_types as types
import pytest
import uvicorn
from asgiref.sync import sync_to_async
from django.db import connections
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from skills_app.domain.json_bytes import encode_json
from skills_app.mcp.outputs import output_schema

# The API's autouse fixture: cached tokens, recalled content and rate counts of one test must
# not reach the next.
from tests.api.conftest import _fresh_caches  # noqa: F401
from tests.support import wait_until

T = TypeVar("T")
MODERN = "2026-07-28"
RECALL = "recall_cloud_skill"


@pytest.fixture(scope="module")
def live_url() -> Iterator[str]:
    """The base URL of the project's ASGI application served by uvicorn on 127.0.0.1."""
    from xmemo.asgi import application

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(application, lifespan="on", log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_until(
        lambda: server.started or not thread.is_alive(),
        15,
        interval=0.02,
        message="uvicorn did not start (see the log above)",
    )
    if not server.started:
        pytest.fail("uvicorn did not start (see the log above)")
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()
        # The MCP tools ran in asgiref's shared worker thread, and Django's ASGI handler ran
        # each REST request in a thread of its own that left its connection to the garbage
        # collector: close them all now, or PostgreSQL cannot drop the test database.
        asyncio.run(sync_to_async(connections.close_all, thread_sensitive=True)())
        gc.collect()


def bearer(secret: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"} if secret is not None else {}


@asynccontextmanager
async def mcp_client(url: str, secret: str | None, mode: str = "auto") -> AsyncIterator[Client]:
    """The SDK client over streamable HTTP to ``url``/mcp, sending ``secret`` as bearer."""
    async with httpx2.AsyncClient(headers=bearer(secret)) as http:
        transport = streamable_http_client(f"{url}/mcp", http_client=http)
        async with Client(transport, mode=mode) as client:
            yield client


def with_mcp(
    url: str, secret: str | None, body: Callable[[Client], Awaitable[T]], mode: str = "auto"
) -> T:
    """Run ``body(client)`` in one MCP session, from a synchronous test."""

    async def run() -> T:
        async with mcp_client(url, secret, mode) as client:
            return await body(client)

    return anyio.run(run)


def rest(url: str, secret: str | None, method: str, path: str, **kwargs: Any) -> httpx.Response:
    """One REST request to the same live server."""
    return httpx.request(method, f"{url}{path}", headers=bearer(secret), timeout=30, **kwargs)


def tool_answer(name: str, result: types.CallToolResult) -> dict[str, Any]:
    """The JSON a tool answered (its text content), once the result is checked as the TypeScript
    SDK checks it (SPEC §18): structured content, where there is any, fits the tool's
    ``outputSchema`` and repeats the text; a success always has it; a failure is ``isError``
    with the error envelope as text."""
    assert len(result.content) == 1
    assert isinstance(result.content[0], types.TextContent)
    answer: dict[str, Any] = json.loads(result.content[0].text)
    if result.structured_content is not None:
        jsonschema.validate(result.structured_content, output_schema(name))
        assert encode_json(result.structured_content) == encode_json(answer)
    assert result.is_error == ("error" in answer), answer
    assert result.is_error or result.structured_content is not None
    return answer


@pytest.fixture(params=[MODERN, LATEST_HANDSHAKE_VERSION], ids=["2026-07-28", "handshake-era"])
def era(request: pytest.FixtureRequest) -> str:
    """The protocol version a request speaks."""
    return str(request.param)


def call_body(
    name: str, arguments: Any, era: str = MODERN, *, meta: bool = True, request_id: Any = 7
) -> str:
    """A ``tools/call`` request of the protocol era ``era``, as JSON."""
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta and era == MODERN:
        params["_meta"] = {PROTOCOL_VERSION_META_KEY: MODERN, CLIENT_CAPABILITIES_META_KEY: {}}
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    )


def call_headers(
    secret: str | None, name: str = RECALL, era: str = MODERN, **extra: str
) -> dict[str, str]:
    """The HTTP headers of ``call_body``'s request, with ``secret`` as bearer."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": era,
    }
    if era == MODERN:  # the 2026-07-28 routing headers
        headers |= {"Mcp-Method": "tools/call", "Mcp-Name": name}
    headers |= extra
    if secret is not None:
        headers["Authorization"] = f"Bearer {secret}"
    return headers
