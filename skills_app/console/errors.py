"""The console's error pages (403/404/500), in the console's look.

The error handlers of ``xmemo/urls.py`` send API and MCP paths to the JSON envelope and
everything else here.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.template import loader

from skills_app.console.base import error_page, with_security_headers


def handler404(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return error_page(
        request,
        status=404,
        title="Not found",
        message="There is nothing here, or it belongs to a workspace you are not a member of.",
    )


def handler403(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return error_page(
        request, status=403, title="Not allowed", message="You do not have permission to do that."
    )


def handler500(request: HttpRequest) -> HttpResponse:
    """Rendered without the request context: the error may have broken the database."""
    html = loader.get_template("console/error.html").render(
        {
            "status": 500,
            "title": "Something broke",
            "message": "The server hit an unexpected error. It has been logged; try again.",
        }
    )
    return with_security_headers(HttpResponse(html, status=500))
