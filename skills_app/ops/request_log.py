"""One JSON line per request on standard error (docs/contract.md §19), outermost middleware.

The request id, the metric and the line are ``infra/requestctx.py``'s (the MCP mount logs its
requests the same way). ``route`` is the URL pattern that matched
(``v1/skills/<str:skill_id>``), never the raw path, so no id or query a client sent reaches the
log; nothing of a header, a token secret or a body is logged.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from skills_app.infra import requestctx
from skills_app.ops.probes import PROBE_PATHS

Handler = Callable[[HttpRequest], HttpResponse]
HEADER = requestctx.HEADER


def request_id_for(request: HttpRequest) -> str:
    return requestctx.request_id_from(request.META.get("HTTP_X_REQUEST_ID", ""))


def route_of(request: HttpRequest) -> str:
    """The URL pattern of the request: bounded, whatever paths clients send."""
    match = getattr(request, "resolver_match", None)
    if match is not None and match.route:
        return str(match.route)
    if request.path_info in PROBE_PATHS:
        return request.path_info.lstrip("/")
    return "unmatched"


class RequestLogMiddleware:
    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        fields = requestctx.begin(request_id_for(request))
        try:
            response = self.get_response(request)
            response[HEADER] = fields["request_id"]
            requestctx.finished(
                fields,
                method=str(request.method),
                route=route_of(request),
                status=response.status_code,
                seconds=time.perf_counter() - started,
            )
            return response
        finally:
            requestctx.end()
