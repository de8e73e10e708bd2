"""Request metrics stay bounded whatever clients send (docs/operations.md, "Metrics"): the
route is the URL pattern and an unknown method counts as ``other``."""

from __future__ import annotations

import pytest
from django.test import Client
from prometheus_client import REGISTRY

pytestmark = pytest.mark.django_db


def _count(route: str, method: str, status: str) -> float:
    value = REGISTRY.get_sample_value(
        "xmemo_http_request_duration_seconds_count",
        {"route": route, "method": method, "status": status},
    )
    return value or 0.0


def test_labels_are_bounded_by_what_the_server_knows() -> None:
    client = Client()
    before = _count("unmatched", "other", "404")
    for n in range(3):
        client.generic(f"BREW{n}", f"/no/such/path/{n}")
    assert _count("unmatched", "other", "404") == before + 3
    for n in range(3):
        assert _count("unmatched", f"BREW{n}", "404") == 0
    pattern = "v1/skills/<str:skill_id>"
    before = _count(pattern, "GET", "401")
    client.get("/v1/skills/skill_a")
    client.get("/v1/skills/skill_b")
    assert _count(pattern, "GET", "401") == before + 2
