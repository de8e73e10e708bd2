"""Level 1's view reads its query string without building Django's ``QueryDict``
(``api/views/recall.py``, ``_query``): the same parameters and values as ``request.GET`` for
every shape of query a client may send, and the same refusal of too many fields."""

from __future__ import annotations

import pytest
from django.core.exceptions import TooManyFieldsSent
from django.core.handlers.asgi import ASGIRequest
from django.core.handlers.wsgi import WSGIRequest
from django.test import AsyncRequestFactory, RequestFactory

from skills_app.api.views.recall import _query

QUERIES = [
    "",
    "slug=deploy",
    "slug=a&slug=b",  # the last value, as request.GET[name]
    "slug=&workspace=team",  # blank values kept
    "slug=team%2Fdeploy&arguments=a+b%20c",
    "slug=caf%C3%A9&label=%E2%9C%93",  # UTF-8
    "slug=caf%E9",  # not UTF-8 once unquoted
    "slug=d\xe9ploy",  # raw non-ASCII bytes, not UTF-8
    "slug=d\xc3\xa9ploy",  # raw UTF-8 bytes
    "noequals&slug=x&=y&a=1=2;b=3",
    "slug=%ZZ&x=%",
]


def _wsgi(query: str) -> WSGIRequest:
    request = RequestFactory().get("/v1/recall")
    request.environ["QUERY_STRING"] = query  # WSGI's native string: bytes as Latin-1
    return request


@pytest.mark.parametrize("query", QUERIES)
def test_the_query_is_what_request_get_reads(query: str) -> None:
    lean, django = _wsgi(query), _wsgi(query)
    assert list(_query(lean).items()) == [(name, django.GET[name]) for name in django.GET]


@pytest.mark.parametrize("query", ["slug=caf%C3%A9&label=x", "slug=a&slug=b", ""])
def test_under_asgi_too(query: str) -> None:
    request = AsyncRequestFactory().get("/v1/recall")
    request.META["QUERY_STRING"] = query
    assert isinstance(request, ASGIRequest)
    assert list(_query(request).items()) == [(name, request.GET[name]) for name in request.GET]


def test_too_many_fields_are_refused_as_django_refuses_them(settings: object) -> None:
    query = "&".join(f"p{i}=1" for i in range(5))
    setattr(settings, "DATA_UPLOAD_MAX_NUMBER_FIELDS", 3)  # noqa: B010
    with pytest.raises(TooManyFieldsSent):
        _wsgi(query).GET  # noqa: B018
    with pytest.raises(TooManyFieldsSent):
        _query(_wsgi(query))
