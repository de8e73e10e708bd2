"""One JSON line per request on standard error (docs/contract.md §19), outermost middleware.

The request id is the client's (or proxy's) ``X-Request-ID`` when it is sane — 1 to 64
characters of letters, digits and ``._:-`` — else a new one; it is sent back in the same
header and handed to the jobs the request enqueues (``infra/queue.py``). ``route`` is the URL
pattern that matched (``v1/skills/<str:skill_id>``), never the raw path, so no id or query a
client sent reaches the log; nothing of a header, a token secret or a body is logged.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from skills_app.infra import requestctx
from skills_app.infra.metrics import REQUESTS

from .probes import PROBES

Handler = Callable[[HttpRequest], HttpResponse]
HEADER = "X-Request-ID"
_SANE = re.compile(r"[A-Za-z0-9._:-]{1,64}")
logger = logging.getLogger("xmemo.request")
# Methods as metric labels: any other a client invents counts as "other" (bounded labels).
METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"))


def request_id_for(request: HttpRequest) -> str:
    given = request.META.get("HTTP_X_REQUEST_ID", "")
    return given if _SANE.fullmatch(given) else uuid.uuid4().hex


def route_of(request: HttpRequest) -> str:
    """The URL pattern of the request: bounded, whatever paths clients send."""
    match = getattr(request, "resolver_match", None)
    if match is not None and match.route:
        return str(match.route)
    if request.path_info in PROBES:
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
            seconds = time.perf_counter() - started
            route, status = route_of(request), response.status_code
            method = request.method if request.method in METHODS else "other"
            REQUESTS.labels(route, method, str(status)).observe(seconds)
            logger.info(
                "request",
                extra={
                    **fields,
                    "method": request.method,
                    "route": route,
                    "status": status,
                    "duration_ms": round(seconds * 1000, 3),
                },
            )
            return response
        finally:
            requestctx.end()
