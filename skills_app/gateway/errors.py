"""One error envelope for every failure, through every door (contract §7).

``{"error": {"code": "UPPER_SNAKE", "message": "…", "details": {…}}}`` — for the product's own
``skills_app.errors`` and for Django's exceptions. Anything unexpected is logged and answered 500
``INTERNAL_ERROR`` in the same envelope; bad input never gets there. The REST door adds DRF's
exceptions on top (``api/errors.py``); MCP sends the same envelope as a tool error or, before any
MCP message is read, as an HTTP answer.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from skills_app import errors
from skills_app.domain.json_bytes import encode_json
from skills_app.domain.shapes import ErrorEnvelope

logger = logging.getLogger("skills_app.api")

API_PREFIXES = ("/v1/",)
WWW_AUTHENTICATE = 'Bearer realm="xmemo"'
PERMISSION_DENIED_MESSAGE = "You do not have permission to do that."
INTERNAL_ERROR_MESSAGE = "Something went wrong on our side; it has been logged."


def envelope(code: str, message: str, details: dict[str, Any] | None = None) -> ErrorEnvelope:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def is_api_path(request: HttpRequest) -> bool:
    """Whether the request is for the API, which answers the envelope rather than a page."""
    return request.path.startswith(API_PREFIXES)


def describe(exc: BaseException) -> tuple[int, ErrorEnvelope, dict[str, str]]:
    """(status, envelope, headers) for the product's and Django's exceptions; anything else is
    logged and answered 500."""
    headers: dict[str, str] = {}
    if isinstance(exc, errors.XmemoError):
        if isinstance(exc, errors.RateLimited) and "retry_after" in exc.details:
            headers["Retry-After"] = str(exc.details["retry_after"])
        if isinstance(exc, errors.AuthenticationRequired):
            headers["WWW-Authenticate"] = WWW_AUTHENTICATE
        return exc.status, envelope(exc.code, exc.message, exc.details), headers
    if isinstance(exc, DjangoPermissionDenied):
        return 403, envelope("PERMISSION_DENIED", PERMISSION_DENIED_MESSAGE), headers
    if isinstance(exc, Http404):
        return 404, envelope("NOT_FOUND", "Not found."), headers
    if isinstance(exc, RequestDataTooBig):
        return 413, envelope("BODY_TOO_LARGE", "The request body is too large."), headers
    if isinstance(exc, SuspiciousOperation):
        return 400, envelope("VALIDATION_ERROR", "The request is malformed."), headers
    if isinstance(exc, RecursionError):
        return 400, envelope("VALIDATION_ERROR", "The request body is nested too deeply."), headers
    logger.exception("Unhandled error in the API", exc_info=exc)
    return 500, envelope("INTERNAL_ERROR", INTERNAL_ERROR_MESSAGE), headers


def json_response(status: int, body: Any, headers: dict[str, str] | None = None) -> HttpResponse:
    response = HttpResponse(encode_json(body), status=status, content_type="application/json")
    for key, value in (headers or {}).items():
        response[key] = value
    return response


def error_response(exc: BaseException) -> HttpResponse:
    """The envelope as a plain Django response (views outside DRF)."""
    status, body, headers = describe(exc)
    return json_response(status, body, headers)


def _no_endpoint(request: HttpRequest) -> HttpResponse:
    return json_response(404, envelope("NOT_FOUND", f"There is no API endpoint at {request.path}."))


def json_handler400(request: HttpRequest) -> HttpResponse:
    return json_response(400, envelope("VALIDATION_ERROR", "The request is malformed."))


def json_handler403(request: HttpRequest) -> HttpResponse:
    return json_response(403, envelope("PERMISSION_DENIED", PERMISSION_DENIED_MESSAGE))


def json_handler404(request: HttpRequest) -> HttpResponse:
    return _no_endpoint(request)


def json_handler500(request: HttpRequest) -> HttpResponse:
    return json_response(500, envelope("INTERNAL_ERROR", INTERNAL_ERROR_MESSAGE))


def json_csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A CSRF refusal under the API: the envelope, not Django's HTML page."""
    return json_response(
        403,
        envelope(
            "PERMISSION_DENIED",
            "CSRF verification failed: send a bearer token, or the CSRF token with a session.",
            {"reason": reason},
        ),
    )


# Exempt from CSRF: it changes nothing, and a bearer-token POST to a path that does not exist
# must hear 404, not a CSRF refusal meant for browsers.
@csrf_exempt
def not_found_view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """Catch-all of the API urlconf: unknown /v1/ paths answer the envelope even with DEBUG on."""
    return _no_endpoint(request)
