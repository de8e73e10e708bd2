"""The MCP server of docs/contract.md §12, independent of the transport that carries it.

A caller sees and may call the tools of its token's client profile that this server implements
(``tools.SERVED_TOOLS``); any other tool is unknown to it, listed nowhere and a protocol error
to call. How the ``Actor`` is found is the transport's business (``ActorResolver``). Tool bodies
use the synchronous ORM, so they run in Django's thread-sensitive worker thread
(``in_db_thread``), never on the event loop."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Awaitable, Callable, Mapping
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any, TypeVar, cast

import mcp_types as types
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from mcp.server import Server
from mcp.server.caching import CacheHint
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.runner import modern_error_data
from mcp.shared.exceptions import MCPError

from skills_app.access import Actor
from skills_app.domain.json_bytes import encode_json
from skills_app.errors import XmemoError
from skills_app.mcp import surfaces
from skills_app.mcp.outputs import output_schema
from skills_app.mcp.tools import SERVED_TOOLS, Answer, tool_run
from skills_app.mcp_profiles import (
    contract,
    exposed_tools,
    profile_extensions,
    tool_spec,
)

# An unknown, foreign or archived resource, skill or folder: -32602 (Invalid params), as the
# 2026-07-28 revision and the Skills extension say, on both protocol revisions (§20).
NOT_SERVED = types.INVALID_PARAMS
# ``skills/list`` and ``skills/get`` results are cacheable results (the SDK's cache hints cover
# only the base protocol's methods): private to the token, like every listing here.
SKILL_RESULT = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
ActorResolver = Callable[[ServerRequestContext[Any, Any]], Awaitable[Actor]]
T = TypeVar("T")

SERVER_NAME = "xmemo-cloud-skills"


def _server_version() -> str:
    """The version ``serverInfo`` reports: the installed package's, else pyproject.toml's (a
    checkout run without installing it)."""
    try:
        return package_version(SERVER_NAME)
    except PackageNotFoundError:
        with (Path(settings.BASE_DIR) / "pyproject.toml").open("rb") as handle:
            return str(tomllib.load(handle)["project"]["version"])


SERVER_VERSION = _server_version()
INSTRUCTIONS = (
    "XMemo Cloud Skills: versioned procedures (SKILL.md) for agents, recalled progressively. "
    "Search with recall_cloud_skill {query} (Level 0), read one skill's instructions with "
    "{slug} (Level 1), then fetch a listed resource with {slug, revision_id, resource} "
    "(Level 2). save_cloud_skill stores a new revision."
)


async def in_db_thread(fn: Callable[..., T], /, **kwargs: Any) -> T:
    """Run ``fn(**kwargs)`` (ORM code) in Django's thread-sensitive worker thread.

    Bracketed like a Django request (``request_started``/``request_finished``): unusable or
    expired connections are dropped before and after, so a long-lived MCP process survives a
    database restart and honours ``CONN_MAX_AGE``.
    """

    def unit() -> T:
        close_old_connections()
        try:
            return fn(**kwargs)
        finally:
            close_old_connections()

    return await sync_to_async(unit, thread_sensitive=True)()


def visible_tools(actor: Actor) -> list[str]:
    """The tools ``actor``'s token profile exposes and this server implements."""
    profile = actor.token.client_profile if actor.token is not None else ""
    return [name for name in exposed_tools(profile) if name in SERVED_TOOLS]


def _tool(name: str) -> types.Tool:
    spec = tool_spec(name)
    return types.Tool(
        name=name,
        description=spec["description"],
        input_schema=spec["input_schema"],
        output_schema=cast(dict[str, Any] | None, output_schema(name)),
        annotations=types.ToolAnnotations(
            read_only_hint=spec["access"] == "read",
            # Saves only ever add an immutable revision.
            destructive_hint=False,
            open_world_hint=False,
        ),
    )


def _json_text(value: Any) -> types.TextContent:
    """The answer as text too, for clients that ignore structured content; serialized like
    the REST responses."""
    return types.TextContent(text=encode_json(value).decode("utf-8"))


def call_result(outcome: Answer | XmemoError) -> types.CallToolResult:
    """A tool's answer as its MCP result; a failure as a tool error carrying the REST error
    envelope (docs/contract.md §7) as text only: structured content must fit the tool's
    ``outputSchema`` (§18), which the envelope does not, and standard clients (the TypeScript
    SDK) refuse the whole result when it does not."""
    if isinstance(outcome, XmemoError):
        return types.CallToolResult(
            content=[_json_text({"error": outcome.as_dict()})], is_error=True
        )
    structured = cast(dict[str, Any], outcome)  # a shape is a plain dict
    return types.CallToolResult(content=[_json_text(outcome)], structured_content=structured)


def call_result_of_text(text: str) -> types.CallToolResult:
    """``call_result`` of an answer already encoded as ``text`` (``encode_json``'s JSON)."""
    structured: dict[str, Any] = json.loads(text)
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=structured
    )


def tool_failure(exc: Exception) -> types.ErrorData:
    """A tool that raised anything but a product error (a bug): logged, and a generic JSON-RPC
    error on the wire, the same in both protocol eras and on every transport. (Left to it, the
    SDK's handshake-era dispatcher would send the exception's own text.)"""
    return modern_error_data(exc)


def _input_schema(name: str) -> Mapping[str, Any] | None:
    """For the SDK's ``Mcp-Param-*`` header check only (not caller-scoped, exposes nothing)."""
    if name not in SERVED_TOOLS or name not in contract()["tools"]:
        return None
    schema: Mapping[str, Any] = tool_spec(name)["input_schema"]
    return schema


def build_server(resolve_actor: ActorResolver) -> Server[Any]:
    """A low-level MCP server whose callers are found by ``resolve_actor``."""

    async def actor_or_refusal(ctx: ServerRequestContext[Any, Any]) -> Actor:
        try:
            return await resolve_actor(ctx)
        except XmemoError as exc:
            raise MCPError(
                code=types.INVALID_REQUEST, message=exc.message, data=exc.as_dict()
            ) from exc

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        actor = await actor_or_refusal(ctx)
        return types.ListToolsResult(tools=[_tool(name) for name in visible_tools(actor)])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        actor = await actor_or_refusal(ctx)
        if params.name not in visible_tools(actor):
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        try:
            answer = await in_db_thread(
                tool_run, name=params.name, actor=actor, arguments=dict(params.arguments or {})
            )
        except XmemoError as exc:
            return call_result(exc)
        except Exception as exc:
            raise MCPError.from_error_data(tool_failure(exc)) from exc
        return call_result(answer)

    async def surface(
        ctx: ServerRequestContext[Any, Any],
        what: str,
        fn: Callable[..., T],
        uri: str | None = None,
        **kwargs: Any,
    ) -> T | None:
        """``fn`` for the caller if its profile sees ``what`` (prompts, resources, skills),
        else None; a product error as the JSON-RPC error carrying the REST envelope (and the
        URI asked for). Whatever the reason a URI is not served (unknown, another tenant's,
        archived, switched off) the code is the same -32602."""
        actor = await actor_or_refusal(ctx)
        if not surfaces.sees(actor, what):
            return None
        if uri is not None:
            kwargs["uri"] = uri
        try:
            return await in_db_thread(fn, actor=actor, **kwargs)
        except XmemoError as exc:
            code = types.INVALID_PARAMS if exc.status < 500 else types.INTERNAL_ERROR
            data: dict[str, Any] = {"error": exc.as_dict()}
            if uri is not None:
                data = {"uri": uri, **data}
            raise MCPError(code=code, message=exc.message, data=data) from exc

    async def list_prompts(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        listed = await surface(ctx, "prompts", surfaces.prompts_list)
        return listed or types.ListPromptsResult(prompts=[])

    async def get_prompt(
        ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        answer = await surface(
            ctx, "prompts", surfaces.prompt_get, name=params.name, arguments=params.arguments
        )
        if answer is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {params.name}")
        return answer

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        cursor = params.cursor if params is not None else None
        listed = await surface(ctx, "resources", surfaces.resources_list, cursor=cursor)
        return listed or types.ListResourcesResult(resources=[])

    async def list_resource_templates(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        actor = await actor_or_refusal(ctx)
        shown = list(surfaces.TEMPLATES) if surfaces.sees(actor, "resources") else []
        return types.ListResourceTemplatesResult(resource_templates=shown)

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        answer = await surface(ctx, "resources", surfaces.resource_get, uri=params.uri)
        if answer is None:
            raise MCPError(
                code=NOT_SERVED, message=f"Unknown resource: {params.uri}", data={"uri": params.uri}
            )
        return answer

    async def list_skills(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams
    ) -> dict[str, Any]:
        listed = await surface(ctx, "skills", surfaces.skills_list, cursor=params.cursor)
        if listed is None:
            raise _method_not_found("skills/list")
        return {**SKILL_RESULT, **listed}

    async def get_skill(ctx: ServerRequestContext[Any, Any], params: UriParams) -> dict[str, Any]:
        answer = await surface(ctx, "skills", surfaces.skill_get, uri=params.uri)
        if answer is None:
            raise _method_not_found("skills/get")
        return {**SKILL_RESULT, **answer}

    async def read_directory(
        ctx: ServerRequestContext[Any, Any], params: DirectoryParams
    ) -> dict[str, Any]:
        answer = await surface(
            ctx, "skills", surfaces.directory_get, uri=params.uri, cursor=params.cursor
        )
        if answer is None:
            raise _method_not_found("resources/directory/read")
        return {"resultType": "complete", **answer}

    async def declare_extensions(
        ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """The caller's profile's extensions in ``initialize`` and ``server/discover`` (the
        contract's ``extensions``): capabilities are per caller, as tools are."""
        result = await call_next(ctx)
        if ctx.method not in ("initialize", "server/discover") or not isinstance(result, dict):
            return result
        try:
            actor = await resolve_actor(ctx)
        except XmemoError:
            return result
        declared = profile_extensions(surfaces.profile_of(actor))
        capabilities = result.get("capabilities")
        if declared and isinstance(capabilities, dict):
            capabilities["extensions"] = {**capabilities.get("extensions", {}), **declared}
        return result

    # Every listing depends on the caller's token: never share one between callers.
    private = CacheHint(ttl_ms=0, scope="private")
    server: Server[Any] = Server(
        SERVER_NAME,
        version=SERVER_VERSION,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
        get_tool_input_schema=_input_schema,
        cache_hints={
            "tools/list": private,
            "prompts/list": private,
            "resources/list": private,
            "resources/templates/list": private,
            "resources/read": private,
        },
    )
    # The Skills extension's methods, through the SDK's public extension points (its lowlevel
    # server has no skills helpers): request handlers and a middleware for the declaration.
    server.add_request_handler("skills/list", types.PaginatedRequestParams, list_skills)
    server.add_request_handler("skills/get", UriParams, get_skill)
    server.add_request_handler("resources/directory/read", DirectoryParams, read_directory)
    server.middleware.append(declare_extensions)
    return server


class UriParams(types.RequestParams):
    """``skills/get``'s params."""

    uri: str


class DirectoryParams(types.PaginatedRequestParams):
    """``resources/directory/read``'s params."""

    uri: str


def _method_not_found(method: str) -> MCPError:
    """What a caller whose profile is declared no Skills extension gets for its methods."""
    return MCPError(code=types.METHOD_NOT_FOUND, message="Method not found", data=method)
