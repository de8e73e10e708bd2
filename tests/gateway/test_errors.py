"""The shared error envelope: Django's handlers by path, and the logged 500 (contract §7)."""

from __future__ import annotations

from typing import Any

from skills_app.gateway.errors import describe
from xmemo.urls import handler404, handler500


def test_django_handlers_answer_json_under_v1_only(rf: Any) -> None:
    api_404 = handler404(rf.get("/v1/x"), Exception())
    assert api_404.status_code == 404
    assert api_404["Content-Type"] == "application/json"
    api_500 = handler500(rf.get("/v1/x"))
    assert api_500.status_code == 500
    assert b'"INTERNAL_ERROR"' in api_500.content
    page_404 = handler404(rf.get("/elsewhere"), Exception())
    assert page_404["Content-Type"].startswith("text/html")


def test_unexpected_exceptions_become_a_logged_500_envelope(caplog: Any) -> None:
    status, body, _ = describe(RuntimeError("boom"))
    assert status == 500
    assert body["error"]["code"] == "INTERNAL_ERROR"
    assert "boom" not in body["error"]["message"]
    assert any("Unhandled" in record.message for record in caplog.records)
