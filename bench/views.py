"""A bare Django view answering a Level-1-sized JSON document: no auth, no database, no cache.

The document has the shape and size of a Level 1 answer of a seeded skill, serialized on every
request like the real one, so the ratio of recall to this view is the cost of recall itself
(authentication, throttle, tenancy query, cache) under the same server, middleware and workers.
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from bench.seed import level1_sized_document

DOCUMENT = level1_sized_document()


def bare_view(request: HttpRequest) -> JsonResponse:
    return JsonResponse(
        DOCUMENT, json_dumps_params={"ensure_ascii": False, "separators": (",", ":")}
    )
