"""Level 1's URL is the first the product's URL conf tries: no other pattern is tried (and
refused with a raised ``Resolver404``) before ``/v1/recall`` resolves; and it resolves to the
lean view function itself, with no view instance built per request."""

from __future__ import annotations

from django.urls import resolve

from skills_app.api.views.recall import RecallView, recall_view


def test_recall_resolves_without_trying_another_pattern_first() -> None:
    match = resolve("/v1/recall", "xmemo.urls")
    assert match.view_name == "api:recall"
    assert match.route == "v1/recall"
    assert match.tried is not None
    assert len(match.tried) == 1, match.tried  # the pattern that matched, nothing before it


def test_recall_is_the_lean_function_marked_as_its_class_view() -> None:
    func = resolve("/v1/recall", "xmemo.urls").func
    assert func is recall_view
    # What the schema's and the isolation test's walks read, and CSRF's exemption (as DRF's).
    assert getattr(func, "cls", None) is RecallView
    assert getattr(func, "view_class", None) is RecallView
    assert getattr(func, "initkwargs", None) == {}
    assert getattr(func, "csrf_exempt", False) is True


def test_the_rest_of_the_site_resolves_as_before() -> None:
    assert resolve("/admin/", "xmemo.urls").app_name == "admin"
    assert resolve("/v1/skills", "xmemo.urls").view_name == "api:skill-list"
