"""The project's URLs and its error handlers, which dispatch by path: API paths answer the JSON
error envelope (``skills_app.gateway.errors``); everything else gets the console's pages
(``skills_app.console.errors``), or Django's own where the console has none."""

from __future__ import annotations

from django.contrib import admin
from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponse
from django.urls import include, path
from django.views import csrf, defaults

from skills_app.console import errors as console_errors
from skills_app.gateway import errors as gateway_errors
from skills_app.gateway.errors import is_api_path

urlpatterns = [
    # The API first: a path tried before the one that matches costs Level 1 a raised and
    # caught Resolver404 (the prefixes are disjoint, so the order changes no answer).
    path("v1/", include("skills_app.api.urls")),
    path("admin/", admin.site.urls),
    path("", include("skills_app.console.oauth_urls")),
    path("", include("skills_app.console.urls")),
]


def handler400(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if is_api_path(request):
        return gateway_errors.json_handler400(request)
    return defaults.bad_request(request, exception or SuspiciousOperation())


def handler403(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if is_api_path(request):
        return gateway_errors.json_handler403(request)
    return console_errors.handler403(request, exception)


def handler404(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if is_api_path(request):
        return gateway_errors.json_handler404(request)
    return console_errors.handler404(request, exception)


def handler500(request: HttpRequest) -> HttpResponse:
    if is_api_path(request):
        return gateway_errors.json_handler500(request)
    return console_errors.handler500(request)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """``CSRF_FAILURE_VIEW``: the envelope under /v1/, Django's page elsewhere."""
    if is_api_path(request):
        return gateway_errors.json_csrf_failure(request, reason)
    return csrf.csrf_failure(request, reason)
