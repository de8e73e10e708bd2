from __future__ import annotations

import functools
import os
import shutil

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from skills_app.errors import SandboxUnavailable
from skills_app.sandbox import selftest
from tests.factories import Env, build_env
from tests.support import require_service

# No periodic work runs in the suite's own process (no beat, no runner): tests flush usage
# when they look (tests/usage.py) and call the periodic tasks themselves (test_periodic.py).
# Passwords hash fast (one setting for the whole run, not a settings fixture around each test);
# a test that needs the real hasher sets its own with the ``settings`` fixture.
django_settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# Property tests: a fast default for a laptop, a thorough "ci" profile (.ci/run exports
# HYPOTHESIS_PROFILE=ci). Tests that name their own max_examples keep it under both.
hypothesis_settings.register_profile("fast", max_examples=25)
hypothesis_settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,  # a shared CI machine's pauses are no failure of the code
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))

# The suite under pytest-xdist: a Redis key prefix per worker, the e2e and browser group.
pytest_plugins = ["tests.parallel"]


@pytest.fixture
def env(db: None) -> Env:
    """Users (owner, admin, member, outsider), a personal and a team workspace."""
    return build_env()


def _uses_the_database(request: pytest.FixtureRequest) -> bool:
    return (
        request.node.get_closest_marker("django_db") is not None
        or "_django_db_helper" in request.fixturenames
    )


@pytest.fixture(autouse=True)
def _fresh_rate_limits(request: pytest.FixtureRequest) -> None:
    """Rate-limit counts (per address too: every test client is 127.0.0.1), usage counts and
    the cache start empty in every test that uses the database (every request does; a test
    without it makes none, and skips this). The limiters count in fixed windows of the wall
    clock: theirs is held one second into the current minute, so that a slow test's requests
    never straddle two windows (the second would count from 0 again)."""
    if not _uses_the_database(request):
        return
    import time
    from types import SimpleNamespace

    from skills_app.gateway import ratelimit
    from skills_app.gateway.ratelimit import limiter
    from skills_app.infra import usage

    held = (time.time() // 60) * 60 + 1
    monkeypatch: pytest.MonkeyPatch = request.getfixturevalue("monkeypatch")
    monkeypatch.setattr(
        ratelimit, "time", SimpleNamespace(time=lambda: held, monotonic=time.monotonic)
    )
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
