"""The REST door's part of the error envelope (contract §7): DRF's own exceptions.

Validation, parse errors, authentication, 404, 405, 406, 415 and throttling become the envelope
here; everything else (the product's errors, Django's, the logged 500) is
``gateway.errors.describe``, shared with MCP and the console.
"""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import set_rollback

from skills_app import errors
from skills_app.domain.shapes import ErrorEnvelope
from skills_app.gateway.errors import (
    PERMISSION_DENIED_MESSAGE,
    WWW_AUTHENTICATE,
    describe,
    envelope,
)


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


def describe_drf(exc: BaseException) -> tuple[int, ErrorEnvelope, dict[str, str]]:
    """(status, envelope, headers) for any exception a DRF view can raise."""
    if not isinstance(exc, exceptions.APIException):
        return describe(exc)
    headers: dict[str, str] = {}
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
    if isinstance(exc, exceptions.PermissionDenied):
        return (
            403,
            envelope("PERMISSION_DENIED", str(exc.detail or PERMISSION_DENIED_MESSAGE)),
            headers,
        )
    if isinstance(exc, exceptions.NotFound):
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
    code = str(exc.default_code).upper()
    return exc.status_code, envelope(code, str(exc.detail)), headers


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF's EXCEPTION_HANDLER: every exception becomes the envelope."""
    status, body, headers = describe_drf(exc)
    set_rollback()
    return Response(body, status=status, headers=headers)
