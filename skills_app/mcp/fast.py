"""The hot MCP call in one step: a 2026-07-28 ``tools/call`` answered without the SDK's dispatch.

Agents mostly come through MCP, and nearly every call is ``recall_cloud_skill``. Through the
SDK's single-exchange path such a call crossed into the database thread twice (the token, then
the tool) and ran the SDK's per-request machinery (a runner, its tracing middleware, pydantic
round trips), about 1.8 ms of CPU where the same recall over REST costs 0.8 ms (``make bench``).

``answer`` takes a POSTed body that the SDK would dispatch to ``tools/call`` and answers it
itself, in one crossing: token, tool visibility, rate limit, scope, input check and the tool
body, as ``server.call_tool`` and ``tools.tool_run`` do. Before it commits, it runs the SDK's own
checks, in the SDK's order, with the SDK's functions (``handle_modern_request``): Host/Origin
and Content-Type, the Accept header, the JSON-RPC envelope, duplicated routing headers, the
2026-07-28 envelope ladder (``classify_inbound_request``), the call's parameters, and the
``Mcp-Param-*`` headers against the tool's schema. Whatever fails any of them, or is anything
but a call of a tool the caller may see, is not answered here: the caller hands the request,
body and all, to the SDK, which then answers it exactly as before — its refusal included.

The result is shaped as the SDK's runner shapes it (``ServerRunner._serialize``): the tool
result dumped, passed through the 2026-07-28 result surface, ``resultType`` and the
``serverInfo`` stamp added. ``tests/mcp/test_fast.py`` compares this path's answers with the
SDK's, byte for byte, with the path switched off (``XMEMO_MCP_FAST_PATH``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from django.conf import settings
from mcp.server import Server
from mcp.server.runner import modern_error_data
from mcp.server.streamable_http import check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    InboundModernRoute,
    classify_inbound_request,
    find_duplicated_routing_header,
    validate_mcp_param_headers,
)
from mcp_types import SERVER_INFO_META_KEY
from mcp_types import methods as mcp_methods
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from ..access import Actor
from ..errors import AuthenticationRequired, XmemoError
from .server import call_result, in_db_thread, visible_tools
from .tools import tool_run

# Bodies this path reads whole before deciding; a larger one goes to the SDK unread. Tool calls
# are small; a large save goes the SDK's way, under its own size limit.
BODY_LIMIT = 64 * 1024
METHOD = "tools/call"

Authenticate = Callable[[], Actor]


def wanted(request: Request) -> bool:
    """Whether a request may be a 2026-07-28 tool call this path answers (headers only)."""
    if request.method != "POST" or not getattr(settings, "XMEMO_MCP_FAST_PATH", True):
        return False
    if request.headers.get("mcp-protocol-version") not in MODERN_PROTOCOL_VERSIONS:
        return False
    if request.headers.get("mcp-method") != METHOD:
        return False
    length = request.headers.get("content-length", "")
    return length.isdigit() and int(length) <= BODY_LIMIT


async def answer(
    request: Request,
    body: bytes,
    *,
    server: Server[Any],
    security: TransportSecurityMiddleware,
    authenticate: Authenticate,
) -> Response | None:
    """The response to a tool call the SDK would dispatch, or None: the SDK's to answer.

    ``authenticate`` runs in the database thread with the tool, before it; the
    ``AuthenticationRequired`` it raises for a bad token propagates (the door answers 401).
    """
    call = await _checked_call(request, body, server=server, security=security)
    if call is None:
        return None
    request_id, version, name, arguments = call

    def unit() -> types.CallToolResult | None:
        actor = authenticate()
        if name not in visible_tools(actor):
            return None  # the SDK refuses an unknown tool with its own error
        try:
            return call_result(tool_run(name=name, actor=actor, arguments=arguments))
        except XmemoError as exc:
            return call_result(exc)

    reply: types.JSONRPCResponse | types.JSONRPCError
    try:
        result = await in_db_thread(unit)
    except AuthenticationRequired:
        raise  # the door's 401
    except Exception as exc:  # a bug in a tool: the SDK's generic error, logged, as it would
        reply = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=modern_error_data(exc))
    else:
        if result is None:
            return None
        reply = types.JSONRPCResponse(
            jsonrpc="2.0", id=request_id, result=_shaped(result, version, server)
        )
    status = 200
    if isinstance(reply, types.JSONRPCError):
        status = ERROR_CODE_HTTP_STATUS.get(reply.error.code, 200)
    wire = reply.model_dump(mode="json", by_alias=True, exclude_none=True)
    return Response(
        json.dumps(wire, separators=(",", ":")), status_code=status, media_type="application/json"
    )


def _shaped(result: types.CallToolResult, version: str, server: Server[Any]) -> dict[str, Any]:
    """The result as the SDK's runner puts it on the wire (``ServerRunner._serialize``): the
    version's result surface, ``resultType``, the ``serverInfo`` stamp."""
    dumped = mcp_methods.serialize_server_result(
        METHOD, version, result.model_dump(by_alias=True, mode="json", exclude_none=True)
    )
    if dumped.get("resultType") is None:
        dumped["resultType"] = "complete"
    meta = dumped.get("_meta")
    if meta is None or (isinstance(meta, dict) and meta.get(SERVER_INFO_META_KEY) is None):
        dumped["_meta"] = {**(meta or {}), SERVER_INFO_META_KEY: server.server_info_stamp}
    return dumped


async def _checked_call(
    request: Request, body: bytes, *, server: Server[Any], security: TransportSecurityMiddleware
) -> tuple[types.RequestId, str, str, dict[str, Any]] | None:
    """(id, protocol version, tool name, arguments) of a call that passes every check the SDK
    makes before dispatching it; None for anything else."""
    if await security.validate_request(request, is_post=True) is not None:
        return None
    if not check_accept_headers(request)[0]:
        return None
    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(decoded, dict) or "id" not in decoded or decoded.get("method") != METHOD:
        return None
    try:
        envelope = types.JSONRPCRequest.model_validate(decoded)
        params = types.CallToolRequestParams.model_validate(envelope.params or {})
    except ValidationError:
        return None
    if find_duplicated_routing_header(request.headers.items()) is not None:
        return None
    verdict = classify_inbound_request(decoded, headers=dict(request.headers))
    if not isinstance(verdict, InboundModernRoute):
        return None
    arguments = dict(params.arguments or {})
    schema = server.get_tool_input_schema(params.name) if server.get_tool_input_schema else None
    if schema is not None and validate_mcp_param_headers(schema, arguments, request.headers):
        return None
    return envelope.id, verdict.protocol_version, params.name, arguments


async def read_body(receive: Callable[[], Awaitable[Any]]) -> tuple[bytes, list[Any]]:
    """The request body, and the ASGI messages it came in (to hand them on unread)."""
    messages = []
    body = bytearray()
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        body.extend(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return bytes(body), messages
