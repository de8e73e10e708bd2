"""The suite's own machinery: ``XMEMO_REQUIRE_SERVICES`` (1 requires every service, a list of
names only those), ``wait_until`` and the ``e2e`` marker."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support import ROOT, run_on_fresh_sqlite, services_required, wait_until


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


def test_wait_until_answers_what_the_predicate_answered_once_true() -> None:
    calls = iter([None, 0, "", "ready"])
    assert wait_until(lambda: next(calls), timeout=5, interval=0) == "ready"


def test_wait_until_fails_saying_what_never_happened() -> None:
    with pytest.raises(AssertionError, match=r"not within 0\.1 s: the light never turned green"):
        wait_until(
            lambda: False, timeout=0.1, interval=0.01, message="the light never turned green"
        )
    with pytest.raises(AssertionError, match="state was red"):
        wait_until(lambda: False, timeout=0, message=lambda: "state was red")


def _collected(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 5), done.stdout + done.stderr  # 5: nothing collected
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_every_e2e_test_is_marked_and_not_e2e_leaves_them_out() -> None:
    files = ["tests/e2e/test_probes.py", "tests/test_support.py"]
    e2e = {item.split("::")[0] for item in _collected("-m", "e2e", *files)}
    fast = {item.split("::")[0] for item in _collected("-m", "not e2e", *files)}
    assert (e2e, fast) == ({files[0]}, {files[1]})


def test_the_processes_lanes_come_first_whatever_pytest_django_reorders() -> None:
    """pytest-django sorts the database tests before the transactional ones (e2e and browser
    tests all are); the lanes must still be the first units xdist hands out, being the longest."""
    files = [
        "tests/api/test_accounts.py",  # the database, rolled back
        "tests/console/test_browser_team_flow.py",  # the browser, transactional
        "tests/e2e/test_probes.py",  # server processes, transactional
        "tests/test_support.py",  # no database
    ]
    modules = [item.split("::")[0] for item in _collected(*files)]
    group = {files[1], files[2]}
    first = len([m for m in modules if m in group])
    assert set(modules[:first]) == group, modules
    assert group.isdisjoint(modules[first:])


def test_the_processes_lanes_are_about_equally_long_and_modules_stay_whole() -> None:
    """Each lane runs on one worker: the suite lasts at least as long as the longer one, so the
    two differ by no more than the longest module (the most a greedy split can promise)."""
    from tests.parallel import LANES, _lanes, runs_processes, weight

    modules = frozenset(
        str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_*.py") if runs_processes(p)
    )
    lane = _lanes(modules)
    assert set(lane) == modules
    assert set(lane.values()) == set(range(LANES))
    lengths = [sum(weight(m) for m in modules if lane[m] == n) for n in range(LANES)]
    assert max(lengths) - min(lengths) <= max(weight(m) for m in modules), lengths


def test_fresh_sqlite_databases_are_migrated_once_per_process_and_start_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each call's database is new (what one wrote, the next does not see), while ``migrate``
    (seconds of CPU on SQLite) runs once for every call of this process with the same settings."""
    commands: list[list[str]] = []
    run = subprocess.run

    def recorded(command: list[str], **kwargs: Any) -> Any:
        commands.append(command)
        return run(command, **kwargs)

    monkeypatch.setattr(subprocess, "run", recorded)
    write = (
        "from django.contrib.auth.models import Group as G; "
        "print(G.objects.count()); G.objects.create(name='x')"
    )
    first = run_on_fresh_sqlite(write, tmp_path / "a", XMEMO_PROBE="1")
    second = run_on_fresh_sqlite(write, tmp_path / "b", XMEMO_PROBE="1")
    assert (first, second) == ("0", "0")
    assert sum("migrate" in command for command in commands) <= 1
