"""Shared test helpers.

``require_service`` is the one way a test says it needs a real external service. On a laptop
without it the test skips with the reason; under ``XMEMO_REQUIRE_SERVICES=1`` (CI) a missing
service is a failure, never a silent skip.
"""

from __future__ import annotations

import os

import pytest


def services_required() -> bool:
    return os.environ.get("XMEMO_REQUIRE_SERVICES", "") == "1"


def require_service(name: str, available: bool, reason: str = "") -> None:
    if available:
        return
    message = f"{name} is not available{': ' + reason if reason else ''}"
    if services_required():
        pytest.fail(f"XMEMO_REQUIRE_SERVICES=1 but {message}")
    pytest.skip(message)
