"""What every DRF view of the API shares: authentication, throttling, JSON only, the schema
class, and the one ``Actor`` of the request."""

from __future__ import annotations

from typing import Any, TypeVar

from django.http import HttpRequest, HttpResponse
from rest_framework import serializers
from rest_framework.authentication import SessionAuthentication
from rest_framework.parsers import JSONParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from skills_app import errors
from skills_app.access import Actor
from skills_app.api.auth import BearerTokenAuthentication, actor_for_request
from skills_app.api.schema import XmemoAutoSchema
from skills_app.api.throttling import TokenRateThrottle
from skills_app.gateway.params import check_param
from skills_app.selectors.pagination import Page, parse_limit

S = TypeVar("S", bound=serializers.Serializer)


class ApiView(APIView):
    authentication_classes = [BearerTokenAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated]
    throttle_classes = [TokenRateThrottle]
    parser_classes = [JSONParser]
    renderer_classes = [JSONRenderer]
    schema = XmemoAutoSchema()

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        for name, value in kwargs.items():
            if isinstance(value, str):
                check_param(name, value)
        for name, values in request.query_params.lists():
            for value in values:
                check_param(name, value)
        super().initial(request, *args, **kwargs)

    @property
    def actor(self) -> Actor:
        return actor_for_request(self.request)

    def param(self, name: str) -> str | None:
        value = self.request.query_params.get(name)
        return value if value not in (None, "") else None

    def limit(self) -> int:
        return parse_limit(self.request.query_params.get("limit"))

    def validated(self, serializer_class: type[S], **kwargs: Any) -> dict[str, Any]:
        data = self.request.data
        if not isinstance(data, dict):
            raise errors.ValidationFailed("The request body must be a JSON object.")
        serializer = serializer_class(data=data, **kwargs)
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)


def page_response(page: Page) -> Response:
    return Response(page.as_dict())


def if_none_match(request: HttpRequest, etag: str) -> bool:
    """True when the client's ``If-None-Match`` already names ``etag`` (answer 304)."""
    header = request.META.get("HTTP_IF_NONE_MATCH")
    if not header:
        return False
    tags = [tag.strip().removeprefix("W/") for tag in header.split(",")]
    return "*" in tags or etag in tags


def not_modified(etag: str, cache_control: str) -> HttpResponse:
    response = HttpResponse(status=304)
    response["ETag"] = etag
    response["Cache-Control"] = cache_control
    return response
