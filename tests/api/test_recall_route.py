"""Level 1's URL is the first the product's URL conf tries: no other pattern is tried (and
refused with a raised ``Resolver404``) before ``/v1/recall`` resolves."""

from __future__ import annotations

from django.urls import resolve


def test_recall_resolves_without_trying_another_pattern_first() -> None:
    match = resolve("/v1/recall", "xmemo.urls")
    assert match.view_name == "api:recall"
    assert match.route == "v1/recall"
    assert match.tried is not None
    assert len(match.tried) == 1, match.tried  # the pattern that matched, nothing before it


def test_the_rest_of_the_site_resolves_as_before() -> None:
    assert resolve("/admin/", "xmemo.urls").app_name == "admin"
    assert resolve("/v1/skills", "xmemo.urls").view_name == "api:skill-list"
