"""``XMEMO_REQUIRE_SERVICES``: 1 requires every service, a list of names only those."""

from __future__ import annotations

import pytest

from tests.support import services_required


@pytest.mark.parametrize(
    ("value", "name", "required"),
    [
        ("1", "PostgreSQL", True),
        ("", "Chromium", False),
        ("chromium,bubblewrap", "Chromium", True),
        ("chromium, bubblewrap", "bubblewrap", True),
        ("chromium,bubblewrap", "PostgreSQL", False),
        ("0", "Redis", False),
    ],
)
def test_which_missing_services_fail(
    monkeypatch: pytest.MonkeyPatch, value: str, name: str, required: bool
) -> None:
    monkeypatch.setenv("XMEMO_REQUIRE_SERVICES", value)
    assert services_required(name) is required
