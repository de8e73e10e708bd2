"""``/healthz``, ``/readyz`` and ``/metrics`` (docs/contract.md §19), answered before any other
middleware.

Load balancers, orchestrators and Prometheus come by address over plain HTTP, so these paths skip
the host check (ALLOWED_HOSTS) and the redirect to HTTPS, and touch no session, no token and
no tenant data. Everything else goes on down the middleware stack as before.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from skills_app import errors
from skills_app.gateway.errors import error_response, json_response
from skills_app.infra.health import readiness

Handler = Callable[[HttpRequest], HttpResponse]


def healthz(request: HttpRequest) -> HttpResponse:
    return json_response(200, {"status": "ok"})


def readyz(request: HttpRequest) -> HttpResponse:
    checks = readiness()
    failed = [name for name, ok in checks.items() if not ok]
    if failed:
        return error_response(
            errors.NotReady(
                f"Not ready: {', '.join(failed)} did not answer within a second.",
                details={"failed": failed},
            )
        )
    return json_response(200, {"status": "ok", "checks": dict.fromkeys(checks, "ok")})


PROBES: dict[str, Handler] = {"/healthz": healthz, "/readyz": readyz}
# The paths this middleware answers, each its own route in the request log.
PROBE_PATHS = frozenset({*PROBES, "/metrics"})


class ProbesMiddleware:
    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        probe = PROBES.get(request.path_info)
        if probe is None and request.path_info == "/metrics" and settings.XMEMO_METRICS_TOKEN:
            from skills_app.ops.metrics_view import (
                metrics_view,  # prometheus_client only where metrics are on
            )

            probe = metrics_view
        if probe is not None and request.method in ("GET", "HEAD"):
            return probe(request)
        return self.get_response(request)
