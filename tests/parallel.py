"""The suite under pytest-xdist: ``make suite`` runs ``pytest -n auto`` (docs/testing.md).

Each worker has its own Redis key prefix (its ``cache.clear()`` deletes only its own keys, and
the processes it starts inherit the prefix) and, from pytest-django, its own test database.
Work goes out a test module at a time, except the ``processes`` group: every module that starts
server or worker processes (tests/e2e) or drives Chromium (marked ``browser``) runs on one
worker, one test at a time, sent first. Two such tests at once on a two-core machine starve
each other until their timeouts fire. (xdist's own ``loadgroup`` reads ``xdist_group`` marks
through ``item._nodeid``, which pytest 9.2 no longer uses: this scheduler replaces it.)
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from xdist.scheduler import LoadScopeScheduling

ROOT = Path(__file__).resolve().parent.parent
E2E = ROOT / "tests" / "e2e"
PROCESSES = "processes"

_worker = os.environ.get("PYTEST_XDIST_WORKER")
if _worker:
    # Before the first use of the cache (Django makes it on first access).
    _prefix = f"{settings.XMEMO_CACHE_PREFIX}-{_worker}"
    os.environ["XMEMO_CACHE_PREFIX"] = settings.XMEMO_CACHE_PREFIX = _prefix
    for _cache in settings.CACHES.values():
        _cache["KEY_PREFIX"] = _prefix


@functools.cache
def runs_processes(path: Path) -> bool:
    """Whether the test module at ``path`` starts processes (tests/e2e) or drives a browser (it
    says ``pytest.mark.browser``). Read from the file: the scheduler sees node ids, not marks."""
    return E2E in path.parents or "pytest.mark.browser" in path.read_text(encoding="utf-8")


class GroupScheduling(LoadScopeScheduling):
    """A work unit per test module, and the ``processes`` group as one unit."""

    def _split_scope(self, nodeid: str) -> str:
        module = nodeid.split("::", 1)[0]
        return PROCESSES if runs_processes(ROOT / module) else module


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> GroupScheduling | None:
    if config.getvalue("dist") != "loadgroup":
        return None
    # Units in collection order, where the group comes first (below): the longest unit must
    # not be the last to start.
    config.option.loadscopereorder = False
    return GroupScheduling(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test under tests/e2e ``e2e`` (before ``-m`` selects: ``pytest -m "not e2e"``
    runs the fast part)."""
    for item in items:
        if E2E in item.path.parents:
            item.add_marker(pytest.mark.e2e)


@pytest.hookimpl(trylast=True, specname="pytest_collection_modifyitems")
def pytest_collection_modifyitems_processes_first(items: list[pytest.Item]) -> None:
    """Put the ``processes`` group first, after pytest-django's own sort (database tests before
    transactional ones, which every e2e and browser test is): sorted before it, the group
    was the unit handed out when about 40 % of the suite had run, the run's long tail."""
    items.sort(key=lambda item: not runs_processes(item.path))
