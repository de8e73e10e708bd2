"""The origin a request came to: what an OAuth access token's audience is held against."""

from __future__ import annotations

import pytest
from django.core.exceptions import DisallowedHost
from django.test import RequestFactory

from skills_app.oauth.resource import request_origin


@pytest.mark.parametrize(
    ("host", "extra", "origin"),
    [
        ("testserver", {}, "http://testserver"),
        ("testserver:8000", {}, "http://testserver:8000"),
        ("127.0.0.1:8000", {}, "http://127.0.0.1:8000"),
        ("[::1]:8000", {}, "http://[::1]:8000"),
        ("testserver", {"HTTP_X_FORWARDED_PROTO": "https"}, "https://testserver"),
        ("testserver", {"wsgi.url_scheme": "https"}, "https://testserver"),
    ],
)
def test_the_origin_is_scheme_and_checked_host_as_the_absolute_uri_has_them(
    host: str, extra: dict[str, str], origin: str
) -> None:
    request = RequestFactory().get("/v1/recall", HTTP_HOST=host)
    request.META.update(extra)
    assert request_origin(request) == origin
    assert request_origin(request) == request.build_absolute_uri("/").rstrip("/")


def test_a_host_not_allowed_has_no_origin() -> None:
    request = RequestFactory().get("/", HTTP_HOST="evil.example")
    with pytest.raises(DisallowedHost):
        request_origin(request)
