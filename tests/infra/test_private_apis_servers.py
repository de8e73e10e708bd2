"""The private MCP SDK and Django cache surface the fast paths stand on, checked by name.

``skills_app/mcp/fast.py`` runs the SDK's request checks and result shaping outside its
dispatch; ``infra/redis_cache.py`` shares Redis pools through ``RedisCacheClient._pools`` and
swaps the client class through ``RedisCache._class``. Some would degrade quietly, so each test
names what an upgrade took away (docs/operations.md, "Fast paths on private APIs", names each
switch to the plain fallback). None needs a service."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from django.core.cache.backends.redis import RedisCache, RedisCacheClient

from skills_app.infra import redis_cache


def _fits(function: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """``function`` can still be called the way the fast path calls it."""
    try:
        inspect.signature(function).bind(*args, **kwargs)
    except TypeError as exc:
        name = getattr(function, "__qualname__", repr(function))
        pytest.fail(f"{function.__module__}.{name} no longer takes {args!r}, {kwargs!r}: {exc}")


# --- skills_app/mcp/fast.py: the SDK's checks and shaping, called outside its dispatch ---------


def test_the_sdk_functions_the_fast_path_calls_still_take_its_arguments() -> None:
    from mcp.server.streamable_http import check_accept_headers
    from mcp.server.transport_security import TransportSecurityMiddleware
    from mcp.shared.inbound import (
        ERROR_CODE_HTTP_STATUS,
        classify_inbound_request,
        find_duplicated_routing_header,
        validate_mcp_param_headers,
        x_mcp_header_map,
    )
    from mcp_types import methods

    _fits(check_accept_headers, object())
    _fits(TransportSecurityMiddleware.validate_request, object(), object(), is_post=True)
    _fits(classify_inbound_request, {}, headers={})
    _fits(find_duplicated_routing_header, [])
    _fits(validate_mcp_param_headers, {}, {}, {})
    _fits(x_mcp_header_map, {})
    _fits(methods.serialize_server_result, "tools/call", "v", {})
    _fits(methods.validate_client_request, "tools/call", "v", None)
    assert isinstance(ERROR_CODE_HTTP_STATUS, Mapping), "ERROR_CODE_HTTP_STATUS is no mapping"
    assert ERROR_CODE_HTTP_STATUS.get(-32601) == 404, "method-not-found is no longer a 404"


def test_the_sdk_server_still_exposes_what_the_fast_path_reads() -> None:
    from skills_app.access import Actor
    from skills_app.mcp.server import build_server

    async def nobody(ctx: Any) -> Actor:
        raise AssertionError("not called")

    server = build_server(nobody)
    assert callable(server.get_tool_input_schema), "Server.get_tool_input_schema is gone"
    assert server.get_tool_input_schema("recall_cloud_skill") is not None
    assert server.server_info_stamp, "Server.server_info_stamp is gone"


# --- infra/redis_cache.py: Django's Redis client, pools shared per process -----------------------


def test_django_redis_cache_still_builds_its_client_from_class_and_keeps_pools_in_a_dict() -> None:
    location = "redis://127.0.0.1:6379/15"
    # Private attributes, so typed as what they are to the checker: unknown.
    backend: Any = RedisCache(location, {})
    assert backend._class is RedisCacheClient, "RedisCache._class no longer names its client"
    tolerant: Any = redis_cache.TolerantRedisCache(location, {})
    client = tolerant._cache
    assert isinstance(client, redis_cache.DataRedisCacheClient), "RedisCache._cache ignores _class"
    plain: Any = RedisCacheClient([location])
    assert plain._pools == {}, "RedisCacheClient no longer keeps its pools in _pools"
    pool = tolerant._cache._get_connection_pool(write=True)  # connects on first command only
    assert pool in tolerant._cache._pools.values(), "the pool was not kept in _pools"
    another: Any = redis_cache.TolerantRedisCache(location, {})
    other = another._cache
    assert other._get_connection_pool(write=True) is pool, "pools are no longer shared"
