"""The suite under pytest-xdist: ``make suite`` runs ``pytest -n auto`` (docs/testing.md).

Each worker has its own Redis key prefix and, from pytest-django, its own test database. Work
goes out a module at a time, longest first, except the modules that start processes
(tests/e2e) or drive Chromium (marked ``browser``): they form two ``processes`` lanes of about
equal length (tests/durations.json), each run by one worker one test at a time, sent first.
They mostly wait on their processes, so ``-n auto`` starts a worker more than there are cores.
xdist's own ``loadgroup`` reads marks through ``item._nodeid``, gone in pytest 9.2: hence this.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from xdist.scheduler import LoadScopeScheduling

ROOT = Path(__file__).resolve().parent.parent
E2E = ROOT / "tests" / "e2e"
DURATIONS = ROOT / "tests" / "durations.json"
LANES = 2
UNMEASURED = {True: 10.0, False: 1.0}  # seconds assumed for a module not in DURATIONS yet

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


@functools.cache
def _durations() -> dict[str, float]:
    durations: dict[str, float] = json.loads(DURATIONS.read_text(encoding="utf-8"))
    return durations


def weight(module: str) -> float:
    """The seconds the module (a path relative to the checkout) took when last measured."""
    return _durations().get(module) or UNMEASURED[runs_processes(ROOT / module)]


@functools.cache
def _lanes(modules: frozenset[str]) -> dict[str, int]:
    """Each processes module's lane: longest first, each to the lane with the least so far."""
    load = [0.0] * LANES
    lane: dict[str, int] = {}
    processes = (m for m in modules if runs_processes(ROOT / m))
    for module in sorted(processes, key=lambda m: (-weight(m), m)):
        lane[module] = load.index(min(load))
        load[lane[module]] += weight(module)
    return lane


class GroupScheduling(LoadScopeScheduling):
    """A work unit per test module, and each ``processes`` lane as one unit."""

    def _split_scope(self, nodeid: str) -> str:
        module = nodeid.split("::", 1)[0]
        if not runs_processes(ROOT / module):
            return module
        return f"processes-{self._lane[module]}"

    @functools.cached_property
    def _lane(self) -> dict[str, int]:
        assert self.collection is not None  # set before the scopes are split
        return _lanes(frozenset(n.split("::", 1)[0] for n in self.collection))


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """One worker per core, and one more: the processes lanes spend most of their time
    waiting on the servers they started."""
    return (os.cpu_count() or 1) + 1


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> GroupScheduling | None:
    if config.getvalue("dist") != "loadgroup":
        return None
    # Units in collection order, the lanes first (below): the longest must not start last.
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
    """Order the units as xdist hands them out: the processes lanes first, then the other
    modules longest first, each module's tests together and in their own order. This runs
    after pytest-django's own sort (database tests before transactional ones, which every e2e
    and browser test is): sorted before it, the processes were handed out when about 40 % of
    the suite had run, the run's long tail."""
    module = {item: item.nodeid.split("::", 1)[0] for item in items}
    lane = _lanes(frozenset(module.values()))
    first = {m: n for n, m in reversed(list(enumerate(module[i] for i in items)))}
    items.sort(
        key=lambda i: (
            lane.get(module[i], LANES),
            -weight(module[i]),
            first[module[i]],
        )
    )
