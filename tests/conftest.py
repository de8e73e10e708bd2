from __future__ import annotations

import functools
import os
import shutil
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache

from skills_app.errors import SandboxUnavailable
from skills_app.sandbox import selftest
from tests.factories import Env, build_env
from tests.support import require_service

# The embedded default's background embedder (services.embeddings) would start whenever a test
# imports the ASGI application and change search results under the tests' feet: the suite's own
# process never runs it (tests that need vectors store them; e2e servers run their own).
os.environ["XMEMO_EMBED_IN_PROCESS"] = "0"
django_settings.XMEMO_EMBED_IN_PROCESS = False
# Nor does it hand its usage counts on in the background: tests flush when they look
# (tests/usage.py), and each test starts with none.
django_settings.XMEMO_USAGE_FLUSH_SECONDS = 0
# Nor does it settle its heap as requests fill it (skills_app/infra/heap.py): it is no server,
# and freezing its objects would keep what tests drop. The servers it starts do (test_heap.py).
django_settings.XMEMO_HEAP_SETTLE = False


@pytest.fixture
def env(db: None) -> Env:
    """Users (owner, admin, member, outsider), a personal and a team workspace."""
    return build_env()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> None:
    """Rate-limit counts (per address too: every test client is 127.0.0.1) and usage counts
    start at zero."""
    from skills_app.gateway.ratelimit import limiter
    from skills_app.infra import usage

    limiter.reset()
    cache.clear()
    usage.reset()


@pytest.fixture(autouse=True, scope="session")
def _tasks_in_process() -> None:
    """Jobs run in-process in tests, as in the embedded default; tests/e2e starts real workers."""
    from xmemo.celery import app

    app.conf.task_always_eager = True


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
