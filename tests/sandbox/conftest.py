from __future__ import annotations

import functools
import shutil

import pytest

from skills_app.errors import SandboxUnavailable
from skills_app.sandbox import selftest
from tests.support import require_service


@functools.cache
def _bubblewrap_problem() -> str | None:
    """Why no sandbox can be made on this machine, or None if one can."""
    if shutil.which("bwrap") is None:
        return "bwrap is not on PATH (apt-get install bubblewrap)"
    try:
        selftest("bwrap")
    except SandboxUnavailable as exc:
        return exc.message
    return None


@pytest.fixture
def bwrap() -> str:
    """The bwrap to run scripts with; skips (or fails under XMEMO_REQUIRE_SERVICES=1) without it."""
    problem = _bubblewrap_problem()
    require_service("bubblewrap", problem is None, problem or "")
    return "bwrap"
