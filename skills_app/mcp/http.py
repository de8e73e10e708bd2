"""MCP over streamable HTTP at ``/mcp``, mounted in the project's ASGI application.

Every request passes, in order: the SDK's Host/Origin allowlist (``XMEMO_MCP_ALLOWED_HOSTS``,
``XMEMO_MCP_ALLOWED_ORIGINS``); bearer authentication by REST's rules (``gateway.auth``; 401 with
the REST envelope and ``WWW-Authenticate``, docs/contract.md §12); ``GET`` answers 405; then the
SDK's transport in stateless JSON mode, so any worker or replica can serve any request. A
``tools/call`` that passes every check the SDK would make is answered by ``fast`` instead, its
token still checked first. The ``Actor`` reaches the tools in the ASGI scope. Every request,
whichever path answers it, is logged and counted as Django's are (``infra/requestctx.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

from django.conf import settings
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from skills_app.access import Actor
from skills_app.domain.json_bytes import encode_json
from skills_app.domain.tokens import bearer_secret, token_hash
from skills_app.errors import AuthenticationRequired, XmemoError
from skills_app.gateway.auth import actor_for_secret, verification, verified_again
from skills_app.gateway.errors import describe, envelope
from skills_app.infra import requestctx, usage
from skills_app.mcp import fast
from skills_app.mcp.server import build_server, in_db_thread
from skills_app.oauth.resource import bearer_challenge

MCP_PATHS = ("/mcp", "/mcp/")
JSON = "application/json"
ACTOR_SCOPE_KEY = "xmemo.actor"
# The route /mcp and /mcp/ are logged and counted under (Django's are URL patterns: "v1/recall").
ROUTE = "mcp"
# Logged when no answer was sent at all: the client went away first (as nginx logs it).
CLIENT_GONE = 499
_REQUEST_ID_HEADER = requestctx.HEADER.lower().encode()
_HAS_PORT = re.compile(r":(\d+|\*)$")

# Django's ASGIHandler types its scope as a dict, narrower than Starlette's ASGIApp.
AsgiApp = Callable[[Any, Any, Any], Awaitable[None]]


def transport_security() -> TransportSecuritySettings:
    """The SDK's Host/Origin allowlist from the settings.

    A host without a port is allowed on any port; the origins of the allowed hosts (http and
    https) are always allowed, plus ``XMEMO_MCP_ALLOWED_ORIGINS``. ``*`` in the hosts turns the
    check off, for a proxy that already pins the Host header.
    """
    hosts: list[str] = list(settings.XMEMO_MCP_ALLOWED_HOSTS)
    if "*" in hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    patterns = [
        p for host in hosts for p in ([host] if _HAS_PORT.search(host) else [host, f"{host}:*"])
    ]
    origins = [f"{scheme}://{p}" for scheme in ("http", "https") for p in patterns]
    return TransportSecuritySettings(
        allowed_hosts=patterns,
        allowed_origins=origins + list(settings.XMEMO_MCP_ALLOWED_ORIGINS),
    )


def _error_response(exc: XmemoError, challenge: str | None = None) -> Response:
    status, body, headers = describe(exc)
    if challenge is not None:
        headers = {**headers, "WWW-Authenticate": challenge}
    return Response(encode_json(body), status_code=status, headers=headers, media_type=JSON)


def _origin(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def _actor(request: Request) -> Actor:
    """The request's caller by its bearer token (database thread)."""
    secret = bearer_secret(request.headers.get("authorization", ""))
    if secret is None:
        raise AuthenticationRequired()
    return actor_for_secret(
        secret=secret,
        via="mcp",
        origin=partial(_origin, request),
        ip=request.client.host if request.client else None,
    )


async def _authenticate(request: Request) -> Actor:
    return await in_db_thread(_actor, request=request)


class _Bearer:
    """A request's bearer credentials (``fast.Caller``)."""

    def __init__(self, request: Request) -> None:
        self.request = request
        self.secret = bearer_secret(request.headers.get("authorization", ""))
        self.key = None if self.secret is None else token_hash(self.secret)

    def authenticate(self) -> Actor:
        return _actor(self.request)

    def verification(self) -> object | None:
        return None if self.secret is None else verification(self.secret)

    def again(self, stamp: object) -> Actor | None:
        if self.secret is None:
            return None
        client = self.request.client
        return verified_again(
            self.secret,
            stamp,
            via="mcp",
            origin=partial(_origin, self.request),
            ip=client.host if client else None,
        )


def _replay(messages: list[Any], receive: Receive) -> Receive:
    """``receive`` with ``messages``, already read, delivered first."""
    pending = list(messages)

    async def replayed() -> Any:
        return pending.pop(0) if pending else await receive()

    return replayed


class _Guarded:
    """Host/Origin check, then bearer authentication, then the MCP transport."""

    def __init__(
        self,
        transport: ASGIApp,
        security: TransportSecuritySettings,
        server: Server[Any],
        kept: fast.Kept,
    ) -> None:
        self.transport = transport
        self.server = server
        self.kept = kept
        # Checked here as well as in the transport so a rebinding attempt is refused before
        # any token lookup, and with the SDK's answer (421/403) rather than a 401.
        self.origin_check = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        refusal = await self.origin_check.validate_request(request)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        try:
            if fast.wanted(request):
                # The hot tool call in one step (mcp/fast.py); anything it does not answer goes
                # on below, the body it read replayed to the SDK as it came.
                body, messages = await fast.read_body(receive)
                response = await fast.answer(
                    request,
                    body,
                    server=self.server,
                    security=self.origin_check,
                    caller=_Bearer(request),
                    kept=self.kept,
                )
                if response is not None:
                    await response(scope, receive, send)
                    return
                receive = _replay(messages, receive)
            actor = await _authenticate(request)
        except AuthenticationRequired as exc:
            # RFC 9728: point OAuth clients at the protected-resource metadata.
            await _error_response(exc, bearer_challenge(_origin(request)))(scope, receive, send)
            return
        if request.method == "GET":
            # The spec lets a server without server-initiated messages answer GET with 405;
            # the SDK would otherwise hold an empty event stream open for as long as the
            # client waits, tying up a worker per idle client.
            await _method_not_allowed(scope, receive, send)
            return
        try:
            await self.transport({**scope, ACTOR_SCOPE_KEY: actor}, receive, send)
        except ClientDisconnect:
            # The client went away before its request was read whole: nobody to answer, and
            # not the server's error (uvicorn would log it as one).
            return


async def _request_actor(ctx: ServerRequestContext[Any, Any]) -> Actor:
    actor = ctx.request.scope.get(ACTOR_SCOPE_KEY) if isinstance(ctx.request, Request) else None
    if not isinstance(actor, Actor):
        raise AuthenticationRequired()
    return actor


class McpMount:
    """The project's ASGI application: ``/mcp`` to MCP, everything else to ``app`` (Django).

    It owns the ASGI lifespan, because the MCP transport needs a running task group: each
    server start (uvicorn sends ``lifespan.startup``) gets a fresh MCP session manager, so the
    same application object can be served again, as the tests do.
    """

    def __init__(self, app: AsgiApp) -> None:
        self.app = app
        self.mcp: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http" and scope["path"] in MCP_PATHS:
            await self._logged(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _logged(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The request served, then logged and counted (``infra/requestctx.py``)."""
        started = time.perf_counter()
        given = next((v for k, v in scope["headers"] if k == _REQUEST_ID_HEADER), b"")
        fields = requestctx.begin(requestctx.request_id_from(given.decode("latin-1")))
        status = CLIENT_GONE

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [
                    *message.get("headers", []),
                    (_REQUEST_ID_HEADER, fields["request_id"].encode()),
                ]
                message = {**message, "headers": headers}
            await send(message)

        try:
            if self.mcp is None:
                await _unavailable(scope, receive, send_with_id)
            else:
                await self.mcp(scope, receive, send_with_id)
        except BaseException:
            if status == CLIENT_GONE:  # unanswered: the server answers an exception with a 500
                status = 500
            raise
        finally:
            requestctx.finished(
                fields,
                method=scope["method"],
                route=ROUTE,
                status=status,
                seconds=time.perf_counter() - started,
            )
            requestctx.end()

    @asynccontextmanager
    async def _serving(self) -> AsyncIterator[None]:
        security = transport_security()
        server = build_server(_request_actor)
        manager = StreamableHTTPSessionManager(
            app=server,
            stateless=True,
            json_response=True,
            security_settings=security,
        )
        kept = fast.Kept()
        async with manager.run():
            self.mcp = _Guarded(manager.handle_request, security, server, kept)
            handoff = asyncio.create_task(_hand_off_usage())
            try:
                yield
            finally:
                self.mcp = None
                handoff.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await handoff
                kept.close()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        started = False
        try:
            async with self._serving():
                started = True
                await send({"type": "lifespan.startup.complete"})
                await receive()  # lifespan.shutdown
        except Exception as exc:
            phase = "shutdown" if started else "startup"
            await send({"type": f"lifespan.{phase}.failed", "message": repr(exc)})
            return
        await send({"type": "lifespan.shutdown.complete"})


async def _hand_off_usage() -> None:
    """The usage counts this worker holds go to Redis within ``usage.HANDOFF_SECONDS``, also
    while no call comes (``infra/usage.py``)."""
    while True:
        await asyncio.sleep(usage.HANDOFF_SECONDS)
        usage.handoff_if_due()


async def _method_not_allowed(scope: Scope, receive: Receive, send: Send) -> None:
    body = envelope(
        "METHOD_NOT_ALLOWED",
        "This MCP server sends no server-initiated messages, so it offers no event stream on "
        "GET; send JSON-RPC requests with POST.",
    )
    await Response(encode_json(body), status_code=405, headers={"Allow": "POST"}, media_type=JSON)(
        scope, receive, send
    )


async def _unavailable(scope: Scope, receive: Receive, send: Send) -> None:
    body = envelope(
        "MCP_UNAVAILABLE",
        "MCP is served only by an ASGI server that runs the lifespan protocol "
        "(uvicorn xmemo.asgi:application).",
    )
    await Response(encode_json(body), status_code=503, media_type=JSON)(scope, receive, send)
