"""``GET /v1/recall`` — the hot path of the product, kept lean.

The view is an ``APIView`` so the OpenAPI schema documents it like every other endpoint, but
``dispatch`` skips DRF's request wrapping, content negotiation and renderer: it authenticates
with the same bearer helper (cached tokens, no round trip), applies the same throttle and
scope rule, calls the one recall selector MCP also calls, and writes the JSON itself. Errors go
through the same envelope as the rest of the API.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from django.conf import settings
from django.core.exceptions import TooManyFieldsSent
from django.core.handlers.wsgi import WSGIRequest
from django.http import HttpRequest, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
)
from rest_framework.request import Request

from skills_app import errors
from skills_app.api.auth import authenticate_lean
from skills_app.api.serializers import (
    ErrorEnvelope,
    RecallResourceOut,
    RecallRootOut,
    RecallSearchOut,
)
from skills_app.api.views.base import ApiView, if_none_match, not_modified
from skills_app.gateway.errors import envelope, error_response, json_response
from skills_app.gateway.params import check_param
from skills_app.gateway.ratelimit import check_rate
from skills_app.selectors.recall import ARGUMENTS_MAX_LENGTH, SEARCH_MAX_LIMIT, recall_encoded

ALLOWED = "GET, HEAD"
CACHE_CONTROL = {
    "search": "private, no-cache",
    "root": "private, no-cache",
    # A resource of a pinned revision never changes.
    "resource": "private, max-age=86400, immutable",
}
PARAMS = frozenset(
    (
        "query",
        "slug",
        "workspace",
        "revision_id",
        "label",
        "resource",
        "arguments",
        "fallback",
        "limit",
    )
)


def _query(request: HttpRequest) -> dict[str, str]:
    """The query's parameters, the last value of each, as ``request.GET[name]`` reads them:
    parsed as Django's ``QueryDict`` parses, without building one (8 µs of Level 1's view)."""
    text = request.META.get("QUERY_STRING", "")
    charset = settings.DEFAULT_CHARSET
    if isinstance(request, WSGIRequest):  # WSGI's native string: the raw bytes as Latin-1
        raw = text.encode("iso-8859-1")
        try:
            text = raw.decode(charset)
        except UnicodeDecodeError:
            text = raw.decode("iso-8859-1")
    try:
        pairs = parse_qsl(
            text,
            keep_blank_values=True,
            encoding=charset,
            max_num_fields=settings.DATA_UPLOAD_MAX_NUMBER_FIELDS,
        )
    except ValueError as exc:
        raise TooManyFieldsSent(
            "The number of GET/POST parameters exceeded settings.DATA_UPLOAD_MAX_NUMBER_FIELDS."
        ) from exc
    return dict(pairs)


def _params(request: HttpRequest) -> dict[str, Any]:
    values: dict[str, Any] = {}
    # Over the parameters given: looking up each of PARAMS instead raises and catches a
    # KeyError per missing name on the hot path.
    for name, value in _query(request).items():
        if name not in PARAMS:
            continue
        if name == "arguments":
            values[name] = check_param(name, value, limit=ARGUMENTS_MAX_LENGTH)
        else:
            values[name] = check_param(name, value)
    if "limit" in values:
        try:
            values["limit"] = int(values["limit"])
        except ValueError:
            raise errors.ValidationFailed(
                f"limit must be a whole number from 1 to {SEARCH_MAX_LIMIT}.",
                details={"field": "limit"},
            ) from None
    return values


def recall_view(request: HttpRequest) -> HttpResponse:
    try:
        if request.method not in ("GET", "HEAD"):
            response = json_response(
                405,
                envelope("METHOD_NOT_ALLOWED", f'Method "{request.method}" not allowed; use GET.'),
            )
            response["Allow"] = ALLOWED
            return response
        actor = authenticate_lean(request)
        check_rate(actor.token, actor.user)
        params = _params(request)
        answer = recall_encoded(actor=actor, **params)
        cache_control = CACHE_CONTROL[answer.kind]
        if answer.etag is not None and if_none_match(request, answer.etag):
            return not_modified(answer.etag, cache_control)
        response = HttpResponse(answer.body, content_type="application/json")
        if answer.etag is not None:
            response["ETag"] = answer.etag
        response["Cache-Control"] = cache_control
        response["Vary"] = "Authorization, Cookie"
        return response
    except Exception as exc:  # every failure answers the envelope
        return error_response(exc)


_QUERY_PARAMS = [
    OpenApiParameter("query", OpenApiTypes.STR, description="Level 0: words to search for."),
    OpenApiParameter(
        "slug",
        OpenApiTypes.STR,
        description="Level 1/2: the skill's slug, or WORKSPACE/SLUG.",
    ),
    OpenApiParameter("workspace", OpenApiTypes.STR, description="Limit to one workspace (slug)."),
    OpenApiParameter(
        "revision_id",
        OpenApiTypes.STR,
        description="Pin a revision (Level 1); required for Level 2.",
    ),
    OpenApiParameter(
        "label",
        OpenApiTypes.STR,
        description="Level 1: the revision this label of the skill points at "
        "(docs/contract.md §18; unknown: 404 LABEL_NOT_FOUND).",
    ),
    OpenApiParameter(
        "resource", OpenApiTypes.STR, description="Level 2: a resource's logical_path."
    ),
    OpenApiParameter(
        "arguments",
        OpenApiTypes.STR,
        description="Level 1: render the body with these (docs/contract.md §11).",
    ),
    OpenApiParameter(
        "fallback",
        OpenApiTypes.STR,
        enum=["latest", "none"],
        description="Level 1 without a published revision: the latest one (default) or 404.",
    ),
    OpenApiParameter(
        "limit",
        OpenApiTypes.INT,
        description=f"Level 0: at most this many results (1 to {SEARCH_MAX_LIMIT}, default 10).",
    ),
]


class RecallView(ApiView):
    """Progressive recall (docs/contract.md §5)."""

    @extend_schema(
        operation_id="recall",
        summary="Progressive recall: search (Level 0), instructions (Level 1), "
        "one resource (Level 2)",
        parameters=_QUERY_PARAMS,
        responses={
            200: PolymorphicProxySerializer(
                component_name="RecallAnswer",
                serializers={
                    "search": RecallSearchOut,
                    "root": RecallRootOut,
                    "resource": RecallResourceOut,
                },
                resource_type_field_name="kind",
            ),
            304: OpenApiResponse(description="Not modified (If-None-Match matched the ETag)."),
            409: OpenApiResponse(
                response=ErrorEnvelope,
                description="AMBIGUOUS_SLUG: qualify the slug as WORKSPACE/SLUG.",
            ),
            413: OpenApiResponse(
                response=ErrorEnvelope,
                description="RENDERED_TOO_LARGE: the body rendered with `arguments` would be "
                "larger than 256 KiB.",
            ),
        },
        tags=["recall"],
    )
    def get(self, request: Request) -> HttpResponse:
        return recall_view(request._request)

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Any:
        """``recall_view`` itself, the lean path (see the module docstring): no view instance
        and no DRF request per request. It is marked as this class's view for the schema and
        the URL walks, and CSRF-exempt as every DRF view is (bearer tokens, or a GET)."""
        view: Any = recall_view
        view.cls = view.view_class = cls
        view.initkwargs = view.view_initkwargs = initkwargs
        view.csrf_exempt = True
        return view
