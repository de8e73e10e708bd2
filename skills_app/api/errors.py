"""One error envelope for every failure of the API (SPEC §7).

``{"error": {"code": "UPPER_SNAKE", "message": "…", "details": {…}}}`` — for the product's own
``skills_app.errors``, for DRF's exceptions (validation, parse errors, authentication, 404, 405,
415, throttling) and for Django's 404/500 under ``/v1/``. Anything unexpected is logged and
answered 500 ``INTERNAL_ERROR`` in the same envelope; bad input never gets there.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import set_rollback

from .. import errors

logger = logging.getLogger("skills_app.api")

API_PREFIXES = ("/v1/",)
WWW_AUTHENTICATE = 'Bearer realm="xmemo"'


def envelope(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _first_message(detail: Any, prefix: str = "") -> str:
    if isinstance(detail, dict):
        for key, value in detail.items():
            label = key if key != "non_field_errors" else ""
            return _first_message(
                value, f"{prefix}.{label}" if prefix and label else label or prefix
            )
    if isinstance(detail, list) and detail:
        if all(isinstance(item, str) for item in detail):
            return f"{prefix}: {detail[0]}" if prefix else str(detail[0])
        for index, item in enumerate(detail):
            if item:
                return _first_message(item, f"{prefix}[{index}]")
    text = str(detail)
    return f"{prefix}: {text}" if prefix else text


def _plain(detail: Any) -> Any:
    if isinstance(detail, dict):
        return {str(key): _plain(value) for key, value in detail.items()}
    if isinstance(detail, list):
        return [_plain(item) for item in detail]
    return str(detail)


def describe(exc: BaseException) -> tuple[int, dict[str, Any], dict[str, str]]:
    """(status, envelope, headers) for any exception."""
    headers: dict[str, str] = {}
    if isinstance(exc, errors.XmemoError):
        if isinstance(exc, errors.RateLimited) and "retry_after" in exc.details:
            headers["Retry-After"] = str(exc.details["retry_after"])
        if isinstance(exc, errors.AuthenticationRequired):
            headers["WWW-Authenticate"] = WWW_AUTHENTICATE
        return exc.status, envelope(exc.code, exc.message, exc.details), headers
    if isinstance(exc, exceptions.ValidationError):
        fields = _plain(exc.detail)
        message = _first_message(fields) or "The input is not valid."
        if not message.endswith("."):
            message += "."
        return 400, envelope("VALIDATION_ERROR", message, {"fields": fields}), headers
    if isinstance(exc, exceptions.ParseError):
        return (
            400,
            envelope("VALIDATION_ERROR", f"The request body could not be read: {exc.detail}"),
            headers,
        )
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        headers["WWW-Authenticate"] = WWW_AUTHENTICATE
        message = (
            errors.AuthenticationRequired.default_message
            if isinstance(exc, exceptions.NotAuthenticated)
            else str(exc.detail)
        )
        return 401, envelope("AUTHENTICATION_REQUIRED", message), headers
    if isinstance(exc, exceptions.PermissionDenied | DjangoPermissionDenied):
        detail = getattr(exc, "detail", None) or "You do not have permission to do that."
        return 403, envelope("PERMISSION_DENIED", str(detail)), headers
    if isinstance(exc, exceptions.NotFound | Http404):
        return 404, envelope("NOT_FOUND", "Not found."), headers
    if isinstance(exc, exceptions.MethodNotAllowed):
        return 405, envelope("METHOD_NOT_ALLOWED", f"{exc.detail}"), headers
    if isinstance(exc, exceptions.NotAcceptable):
        return 406, envelope("NOT_ACCEPTABLE", "This endpoint answers application/json."), headers
    if isinstance(exc, exceptions.UnsupportedMediaType):
        return (
            415,
            envelope("UNSUPPORTED_FORMAT", f"{exc.detail} Send application/json."),
            headers,
        )
    if isinstance(exc, exceptions.Throttled):
        wait = int(getattr(exc, "wait", None) or 1)
        headers["Retry-After"] = str(max(1, wait))
        return (
            429,
            envelope(
                "RATE_LIMITED", f"Too many requests; retry in {wait} s.", {"retry_after": wait}
            ),
            headers,
        )
    if isinstance(exc, RequestDataTooBig):
        return 413, envelope("BODY_TOO_LARGE", "The request body is too large."), headers
    if isinstance(exc, SuspiciousOperation):
        return 400, envelope("VALIDATION_ERROR", "The request is malformed."), headers
    if isinstance(exc, RecursionError):
        return 400, envelope("VALIDATION_ERROR", "The request body is nested too deeply."), headers
    if isinstance(exc, exceptions.APIException):
        code = str(exc.default_code).upper()
        return exc.status_code, envelope(code, str(exc.detail)), headers
    logger.exception("Unhandled error in the API", exc_info=exc)
    return (
        500,
        envelope("INTERNAL_ERROR", "Something went wrong on our side; it has been logged."),
        headers,
    )


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF's EXCEPTION_HANDLER: every exception becomes the envelope."""
    status, body, headers = describe(exc)
    set_rollback()
    return Response(body, status=status, headers=headers)


def json_response(status: int, body: Any, headers: dict[str, str] | None = None) -> HttpResponse:
    response = HttpResponse(
        json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8"),
        status=status,
        content_type="application/json",
    )
    for key, value in (headers or {}).items():
        response[key] = value
    return response


def error_response(exc: BaseException) -> HttpResponse:
    """The envelope as a plain Django response (views outside DRF)."""
    status, body, headers = describe(exc)
    return json_response(status, body, headers)


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIXES)


def handler400(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return json_response(400, envelope("VALIDATION_ERROR", "The request is malformed."))
    return defaults.bad_request(request, exception or SuspiciousOperation())


def handler403(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return json_response(
            403, envelope("PERMISSION_DENIED", "You do not have permission to do that.")
        )
    return defaults.permission_denied(request, exception or DjangoPermissionDenied())


def handler404(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return json_response(
            404, envelope("NOT_FOUND", f"There is no API endpoint at {request.path}.")
        )
    return defaults.page_not_found(request, exception)


def handler500(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        return json_response(
            500, envelope("INTERNAL_ERROR", "Something went wrong on our side; it has been logged.")
        )
    return defaults.server_error(request)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW for API paths: the envelope, not Django's HTML page."""
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
    return json_response(404, envelope("NOT_FOUND", f"There is no API endpoint at {request.path}."))
