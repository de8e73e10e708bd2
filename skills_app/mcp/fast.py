"""The hot MCP call in one step: a ``tools/call`` answered without the SDK's dispatch.

Nearly every MCP call is ``recall_cloud_skill``; through the SDK it crossed into the database
thread twice and ran the SDK's per-request machinery. ``answer`` runs the SDK's own checks for
the request's protocol era with the SDK's functions, then token, tool and body in one crossing,
and shapes and encodes the result as the SDK's runner and transport would; anything else, or
anything those checks refuse, goes to the SDK unchanged (docs/mcp.md). ``tests/mcp/test_fast.py``
requires the same bytes with the path on and off. Private API: the SDK functions imported below
(``tests/infra/test_private_apis_servers.py``); ``XMEMO_MCP_FAST_PATH=0`` is the SDK's dispatch."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import mcp_types as types
import pydantic_core
from django.conf import settings
from mcp.server import Server
from mcp.server.streamable_http import check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PROTOCOL_VERSION_HEADER,
    InboundModernRoute,
    classify_inbound_request,
    find_duplicated_routing_header,
    validate_mcp_param_headers,
    x_mcp_header_map,
)
from mcp_types import DEFAULT_NEGOTIATED_VERSION, SERVER_INFO_META_KEY, jsonrpc_message_adapter
from mcp_types import methods as mcp_methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from skills_app.access import Actor
from skills_app.errors import AuthenticationRequired, XmemoError
from skills_app.infra import invalidation
from skills_app.infra.cache import ByteBoundedLRU
from skills_app.infra.invalidation import LoopListener
from skills_app.mcp.server import (
    call_result,
    call_result_of_text,
    in_db_thread,
    tool_failure,
    visible_tools,
)
from skills_app.mcp.tools import tool_again, tool_run, tool_text

# Bodies this path reads whole before deciding; a larger one goes to the SDK unread. Tool calls
# are small; a large save goes the SDK's way, under its own size limit.
BODY_LIMIT = 64 * 1024
METHOD = "tools/call"
JSON = "application/json"
RESULTS_BYTES = 32 * 1024 * 1024


class Caller(Protocol):
    """A request's credentials, as the door reads them."""

    # What identifies them (a digest, never the secret); None: nothing is kept for them.
    key: str | None

    def authenticate(self) -> Actor:
        """The caller (database thread); AuthenticationRequired for a bad token."""

    def verification(self) -> object | None:
        """The cached verification ``authenticate`` used (database thread), or None."""

    def again(self, stamp: object) -> Actor | None:
        """The caller again, by that verification, with no I/O (event loop), or None."""


@dataclass(frozen=True)
class _Call:
    """A tool call that passed every check the SDK makes before dispatching it."""

    request_id: types.RequestId
    version: str
    name: str
    arguments: dict[str, Any]

    @property
    def modern(self) -> bool:
        return self.version in MODERN_PROTOCOL_VERSIONS


@dataclass(frozen=True)
class _Ran:
    """What the database thread did for a call: its result (the encoded ``result`` member of
    an answer sent before, as text), and what sending the answer again takes."""

    result: types.CallToolResult | str
    again: Callable[[Actor], None] | None = None
    stamp: object | None = None


@dataclass(frozen=True)
class _Kept:
    member: str
    again: Callable[[Actor], None]
    stamp: object
    generations: tuple[int, int]


class Kept:
    """Answers sent to a caller, sent again on the event loop: no database thread, no check
    repeated but the rate limit, while nothing they were read from has changed.

    Kept per caller (the token's digest), protocol version, tool and arguments, for answers that
    change only with the database (``tools.Text.again``). Sent again only while the generations
    are those it was read in: this process's (every ORM change here) and a LISTEN of the
    loop's own that hears every commit anywhere (``invalidation.LoopListener``); and while the
    token's cached verification is the one it was read with, within its lifetime and admitted
    now (``gateway.auth.verified_again``). One per server start."""

    def __init__(self) -> None:
        self.listener = LoopListener()
        self._answers = ByteBoundedLRU(RESULTS_BYTES)

    def generations(self) -> tuple[int, int] | None:
        loop = self.listener.current()
        return None if loop is None else (loop, invalidation.seen())

    def find(self, key: str, generations: tuple[int, int]) -> _Kept | None:
        found = self._answers.get(key)
        return found if isinstance(found, _Kept) and found.generations == generations else None

    def keep(self, key: str, kept: _Kept) -> None:
        self._answers.set(key, kept, len(key) + len(kept.member))

    def close(self) -> None:
        self.listener.close()
        self._answers.clear()


def wanted(request: Request) -> bool:
    """Whether a request may be a tool call this path answers (headers only): a 2026-07-28
    request routed as ``tools/call``, or any handshake-era POST (its body says what it is)."""
    if request.method != "POST" or not getattr(settings, "XMEMO_MCP_FAST_PATH", True):
        return False
    length = request.headers.get("content-length", "")
    if not (length.isdigit() and int(length) <= BODY_LIMIT):
        return False
    version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
    if version in MODERN_PROTOCOL_VERSIONS:
        return request.headers.get("mcp-method") == METHOD
    # What the SDK's session manager routes to its stateless (handshake-era) transport.
    return version is None or version in HANDSHAKE_PROTOCOL_VERSIONS


async def answer(
    request: Request,
    body: bytes,
    *,
    server: Server[Any],
    security: TransportSecurityMiddleware,
    caller: Caller,
    kept: Kept,
) -> Response | None:
    """The response to a tool call the SDK would dispatch, or None: the SDK's to answer.

    An answer ``kept`` holds for the caller is sent again on the loop. Otherwise
    ``caller.authenticate`` runs in the database thread with the tool, before it; the
    ``AuthenticationRequired`` it raises for a bad token propagates (the door answers 401).
    """
    if request.headers.get(MCP_PROTOCOL_VERSION_HEADER) in MODERN_PROTOCOL_VERSIONS:
        call = await _checked_call(request, body, server=server, security=security)
    else:
        call = await _checked_handshake_call(request, body, security=security)
    if call is None:
        return None
    generations = kept.generations()
    key = None if caller.key is None or generations is None else _kept_key(call, caller.key)
    if key is not None:
        assert generations is not None
        found = kept.find(key, generations)
        if found is not None:
            actor = caller.again(found.stamp)
            if actor is not None:
                return _sent_again(call, found, actor, server)

    def unit() -> _Ran | None:
        kept.listener.ensure()
        actor = caller.authenticate()
        if call.name not in visible_tools(actor):
            return None  # the SDK refuses an unknown tool with its own error
        try:
            # REST's bytes as the text (recall): an answer sent before is found by them, with
            # no document built, encoded or validated again.
            text = tool_text(name=call.name, actor=actor, arguments=call.arguments)
            if text is None:
                answered = tool_run(name=call.name, actor=actor, arguments=call.arguments)
                return _Ran(call_result(answered))
            stamp = None if text.again is None else caller.verification()
            member = _results.get(_result_key(call, text.text))
            result = call_result_of_text(text.text) if member is None else str(member)
            return _Ran(result, text.again, stamp)
        except XmemoError as exc:
            return _Ran(call_result(exc))

    try:
        ran = await in_db_thread(unit)
    except AuthenticationRequired:
        raise  # the door's 401
    except Exception as exc:  # a bug in a tool: logged, a generic error (server.tool_failure)
        error = tool_failure(exc)
        return _reply(call, types.JSONRPCError(jsonrpc="2.0", id=call.request_id, error=error))
    if ran is None:
        return None
    if isinstance(ran.result, str):  # the encoded result member of an answer sent before
        member: str | None = ran.result
        response = _http(call, _envelope_start(call) + ran.result + "}", 200)
    else:
        response, member = _result_reply(call, ran.result, server)
    if key is not None and member is not None and ran.again is not None and ran.stamp is not None:
        assert generations is not None
        kept.keep(key, _Kept(member, ran.again, ran.stamp, generations))
    return response


def _kept_key(call: _Call, caller: str) -> str:
    arguments = json.dumps(call.arguments, sort_keys=True, separators=(",", ":"))
    return f"{caller}\x00{call.version}\x00{call.name}\x00{arguments}"


def _sent_again(call: _Call, kept: _Kept, actor: Actor, server: Server[Any]) -> Response:
    try:
        tool_again(actor=actor, again=kept.again)
    except XmemoError as exc:  # over the rate limit
        return _result_reply(call, call_result(exc), server)[0]
    return _http(call, _envelope_start(call) + kept.member + "}", 200)


def _result_reply(
    call: _Call, result: types.CallToolResult, server: Server[Any]
) -> tuple[Response, str | None]:
    """The answer carrying ``result``, and its encoded ``result`` member if it succeeded. That
    member depends only on the era and the result's text (the tool's answer as JSON, which the
    structured content repeats): it is kept per process, and a result asked for again (the same
    skill, any caller, any request id) is not validated and encoded again around its new id."""
    only = result.content[0] if len(result.content) == 1 else None
    if result.is_error or not isinstance(only, types.TextContent):
        # Errors are cheap to encode, and anyone can make new ones: kept, they would only push
        # out the answers worth keeping.
        return _reply(call, _response(call, result, server)), None
    key = _result_key(call, only.text)
    member = _results.get(key)
    if member is None:
        response = _response(call, result, server)
        encoded = _encoded(call, response)
        member = _result_member(call, encoded)
        if member is not None:
            _results.set(key, member, len(key) + len(member))
        return _http(call, encoded, 200), member
    return _http(call, _envelope_start(call) + member + "}", 200), str(member)


def _result_key(call: _Call, text: str) -> str:
    return f"{call.version}\x00{text}"


def _response(
    call: _Call, result: types.CallToolResult, server: Server[Any]
) -> types.JSONRPCResponse:
    shaped = _shaped(result, call, server)
    return types.JSONRPCResponse(jsonrpc="2.0", id=call.request_id, result=shaped)


def _reply(call: _Call, reply: types.JSONRPCResponse | types.JSONRPCError) -> Response:
    """The HTTP response the SDK's transport of the call's era sends for ``reply``."""
    status = 200
    if call.modern and isinstance(reply, types.JSONRPCError):
        status = ERROR_CODE_HTTP_STATUS.get(reply.error.code, 200)
    return _http(call, _encoded(call, reply), status)


def _encoded(call: _Call, reply: types.JSONRPCResponse | types.JSONRPCError) -> str:
    if not call.modern:  # StreamableHTTPServerTransport._create_json_response
        return reply.model_dump_json(by_alias=True, exclude_unset=True)
    dumped = reply.model_dump(mode="json", by_alias=True, exclude_none=True)
    return json.dumps(dumped, separators=(",", ":"))


def _http(call: _Call, body: str, status: int) -> Response:
    if not call.modern:
        return Response(body, status_code=status, headers={"Content-Type": JSON})
    return Response(body, status_code=status, media_type=JSON)


def _envelope_start(call: _Call) -> str:
    """The encoded answer up to its ``result`` member's value, as the era's encoder writes it."""
    request_id = (
        json.dumps(call.request_id)
        if call.modern
        else pydantic_core.to_json(call.request_id).decode("utf-8")
    )
    return f'{{"jsonrpc":"2.0","id":{request_id},"result":'


def _result_member(call: _Call, encoded: str) -> str | None:
    """The encoded ``result`` value cut out of a whole answer; None (nothing kept) if the answer
    is not laid out as ``_envelope_start`` expects."""
    start = _envelope_start(call)
    if not (encoded.startswith(start) and encoded.endswith("}")):
        return None
    return encoded[len(start) : -1]


# Encoded successful results by era and text (``_result_reply``); bounded like the recall
# content kept in process (infra/cache.py).
_results = ByteBoundedLRU(RESULTS_BYTES)


def results_kept() -> int:
    return len(_results)


def forget_results() -> None:
    _results.clear()


def _shaped(result: types.CallToolResult, call: _Call, server: Server[Any]) -> dict[str, Any]:
    """The result as the SDK's runner puts it on the wire (``ServerRunner._serialize``): the
    version's result surface; for 2026-07-28, ``resultType`` and the ``serverInfo`` stamp."""
    dumped = mcp_methods.serialize_server_result(
        METHOD, call.version, result.model_dump(by_alias=True, mode="json", exclude_none=True)
    )
    if not call.modern:
        return dumped
    if dumped.get("resultType") is None:
        dumped["resultType"] = "complete"
    meta = dumped.get("_meta")
    if meta is None or (isinstance(meta, dict) and meta.get(SERVER_INFO_META_KEY) is None):
        dumped["_meta"] = {**(meta or {}), SERVER_INFO_META_KEY: server.server_info_stamp}
    return dumped


async def _checked_call(
    request: Request, body: bytes, *, server: Server[Any], security: TransportSecurityMiddleware
) -> _Call | None:
    """A 2026-07-28 call that passes every check the SDK's modern entry makes before
    dispatching it (``handle_modern_request``); None for anything else."""
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
    if (
        schema is not None
        and _declares_param_headers(schema)
        and validate_mcp_param_headers(schema, arguments, request.headers)
    ):
        return None
    return _Call(envelope.id, verdict.protocol_version, params.name, arguments)


async def _checked_handshake_call(
    request: Request, body: bytes, *, security: TransportSecurityMiddleware
) -> _Call | None:
    """A handshake-era call that passes every check the SDK's stateless transport
    (``StreamableHTTPServerTransport._handle_post_request``) and its runner
    (``ServerRunner._on_request``) make before the tool handler runs; None for anything else,
    the handshake itself included."""
    if await security.validate_request(request, is_post=True) is not None:
        return None
    if not check_accept_headers(request)[0] or not _json_content_type(request):
        return None
    try:
        message = jsonrpc_message_adapter.validate_python(
            pydantic_core.from_json(body), by_name=False
        )
    except ValueError:  # not JSON, or not a JSON-RPC message (pydantic's error is one too)
        return None
    if not isinstance(message, types.JSONRPCRequest) or message.method != METHOD:
        return None
    version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
    if version is None:  # the stateless transport's connection assumes the spec's default
        version = DEFAULT_NEGOTIATED_VERSION
    try:
        mcp_methods.validate_client_request(METHOD, version, message.params)
        params = types.CallToolRequestParams.model_validate(
            {} if message.params is None else message.params, by_name=False
        )
    except (KeyError, ValueError):
        return None
    return _Call(message.id, version, params.name, dict(params.arguments or {}))


# Schema (by identity, held so its id stays its own) -> whether any property declares an
# ``Mcp-Param-*`` header. Without one, ``validate_mcp_param_headers`` has nothing to compare and
# accepts every request; walking the schema to find that out cost 5 % of a call.
_param_headers: dict[int, tuple[Any, bool]] = {}


def _declares_param_headers(schema: Any) -> bool:
    seen = _param_headers.get(id(schema))
    if seen is None or seen[0] is not schema:
        if len(_param_headers) > 64:  # schemas come from the contract file: few, rarely new
            _param_headers.clear()
        seen = (schema, bool(x_mcp_header_map(schema)))
        _param_headers[id(schema)] = seen
    return seen[1]


def _json_content_type(request: Request) -> bool:
    """The stateless transport's own Content-Type test (``_check_content_type``)."""
    media = request.headers.get("content-type", "").split(";")[0]
    return any(part.strip() == JSON for part in media.split(","))


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
