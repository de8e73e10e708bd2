"""Project-wide 403/404/500 handlers, dispatched by path.

API and MCP paths keep the JSON error envelope (``skills_app.api.errors``); everything else
gets the console's error page, in the console's look.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.template import loader
from django.views import csrf

from ..api import errors as api_errors
from .base import error_page, with_security_headers


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith(api_errors.API_PREFIXES)


def handler404(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return api_errors.handler404(request, exception)
    return error_page(
        request,
        status=404,
        title="Not found",
        message="There is nothing here, or it belongs to a workspace you are not a member of.",
    )


def handler403(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return api_errors.handler403(request, exception)
    return error_page(
        request, status=403, title="Not allowed", message="You do not have permission to do that."
    )


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """``CSRF_FAILURE_VIEW``: the envelope under /v1/, Django's page elsewhere."""
    if _is_api(request):
        return api_errors.csrf_failure(request, reason)
    return csrf.csrf_failure(request, reason)


def handler500(request: HttpRequest) -> HttpResponse:
    """Rendered without the request context: the error may have broken the database."""
    if _is_api(request):
        return api_errors.handler500(request)
    html = loader.get_template("console/error.html").render(
        {
            "status": 500,
            "title": "Something broke",
            "message": "The server hit an unexpected error. It has been logged; try again.",
        }
    )
    return with_security_headers(HttpResponse(html, status=500))
