"""This server as an OAuth protected resource (RFC 9728) and token audience (RFC 8707).

The resource identifier is the URL of ``/mcp`` on the origin a request came to (the origin is
checked against ``ALLOWED_HOSTS``/the MCP host allowlist before this runs). A token is accepted
only when every resource it was issued for names this server: the origin itself or its ``/mcp``.
One token serves ``/mcp`` and ``/v1/`` alike, as an API token does.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.http import HttpRequest

MCP_PATH = "/mcp"
PRM_PATH = "/.well-known/oauth-protected-resource"


def request_origin(request: HttpRequest) -> str:
    """``scheme://host[:port]`` of the request, the host checked against ALLOWED_HOSTS (what
    ``build_absolute_uri("/")`` starts with, without building and quoting a URL)."""
    return f"{request.scheme}://{request.get_host()}"


def mcp_resource(origin: str) -> str:
    return origin + MCP_PATH


def resource_allowed(resource: str, origin: str) -> bool:
    return resource.rstrip("/") in (origin, mcp_resource(origin))


def audience_allows(resources: Iterable[str], origin: str) -> bool:
    """True when the token's resources are non-empty and all name this server."""
    listed = list(resources)
    return bool(listed) and all(resource_allowed(r, origin) for r in listed)


def bearer_challenge(origin: str) -> str:
    """The ``WWW-Authenticate`` value of a 401 on ``/mcp`` (RFC 9728 §5.1)."""
    return f'Bearer resource_metadata="{origin}{PRM_PATH}{MCP_PATH}"'
