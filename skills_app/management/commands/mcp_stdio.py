"""``XMEMO_TOKEN=xm_… python manage.py mcp_stdio``: MCP over stdin/stdout (docs/contract.md §12,
§15). ``--token TOKEN`` still works, but a command line is visible to every user of the machine
(``ps``), so the environment is the recommended place; the token is never printed.

The token is checked with the REST rules before serving, and again on every request (through
the short-lived token cache), so revoking it ends the session's access. stdout carries only
the protocol; logs go to stderr.
"""

from __future__ import annotations

import os
from typing import Any

import anyio
from django.core.management.base import BaseCommand, CommandError, CommandParser
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

from skills_app.access import Actor
from skills_app.errors import AuthenticationRequired
from skills_app.gateway.auth import actor_for_secret
from skills_app.mcp.server import build_server, in_db_thread

TOKEN_VARIABLE = "XMEMO_TOKEN"


def _actor(secret: str) -> Actor:
    return actor_for_secret(secret, via="mcp", origin=None, ip=None)


async def _serve(secret: str) -> None:
    async def resolve(ctx: ServerRequestContext[Any, Any]) -> Actor:
        return await in_db_thread(_actor, secret=secret)

    server = build_server(resolve)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


class Command(BaseCommand):
    help = "Serve MCP over stdio for the client that runs this command, as the token's user."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--token",
            help="An XMemo bearer token (xm_…). Prefer the XMEMO_TOKEN environment variable: "
            "a command line is visible in ps.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        secret = (options["token"] or os.environ.get(TOKEN_VARIABLE) or "").strip()
        if not secret:
            raise CommandError(
                f"No token: set {TOKEN_VARIABLE} to an XMemo bearer token (or pass --token)."
            )
        try:
            _actor(secret)
        except AuthenticationRequired as exc:
            raise CommandError(exc.message) from exc
        anyio.run(_serve, secret)
