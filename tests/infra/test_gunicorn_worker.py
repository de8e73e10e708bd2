"""The gunicorn worker hands usage counts on while it idles (``xmemo/gunicorn_worker.py``): it
wakes at least every ``usage.HANDOFF_SECONDS`` and hands on what fell due at each turn of its
loop. The real server end to end: ``tests/e2e/test_usage.py``."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from gunicorn.workers.sync import SyncWorker

from skills_app.infra import usage
from xmemo.gunicorn_worker import UsageSyncWorker

ROOT = Path(__file__).resolve().parents[2]


def test_the_worker_wakes_within_the_handoff_and_hands_counts_on_each_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    handed: list[int] = []
    monkeypatch.setattr(usage, "handoff_if_due", lambda: handed.append(1))
    monkeypatch.setattr(SyncWorker, "run", lambda self: None)  # the loop itself: gunicorn's
    worker = UsageSyncWorker.__new__(UsageSyncWorker)
    worker.tmp = SimpleNamespace(notify=lambda: None)
    worker.timeout = 15.0  # half gunicorn's default 30 s timeout
    worker.run()
    assert worker.timeout == usage.HANDOFF_SECONDS
    worker.notify()
    worker.notify()
    assert handed == [1, 1]


def test_gunicorn_conf_makes_it_the_worker_class() -> None:
    from gunicorn.config import Config

    conf = ast.parse((ROOT / "gunicorn.conf.py").read_text())
    [named] = [
        node.value.value
        for node in conf.body
        if isinstance(node, ast.Assign)
        and [getattr(t, "id", None) for t in node.targets] == ["worker_class"]
        and isinstance(node.value, ast.Constant)
    ]
    config = Config()
    config.set("worker_class", named)
    assert config.worker_class is UsageSyncWorker


def _conf_constant(name: str) -> object:
    conf = ast.parse((ROOT / "gunicorn.conf.py").read_text())
    [value] = [
        node.value.value
        for node in conf.body
        if isinstance(node, ast.Assign)
        and [getattr(t, "id", None) for t in node.targets] == [name]
        and isinstance(node.value, ast.Constant)
    ]
    return value


def test_the_application_is_loaded_once_before_the_workers_fork() -> None:
    """Each worker importing Django, the project and the model runtime again cost about 2 CPU-s
    and its own copy of their memory; loaded in the parent, the workers share it."""
    assert _conf_constant("preload_app") is True


def test_gunicorn_opens_no_control_socket() -> None:
    """gunicorn 25.1+ listens for ``gunicornc`` (worker counts, reload, shutdown) on one path
    per user, ``~/.gunicorn/gunicorn.ctl``, shared by every gunicorn of that user: off."""
    assert _conf_constant("control_socket_disable") is True


PRE_FORK_STATE = """
import os, threading
import xmemo.wsgi
from django.db import connections
open_connections = [c.alias for c in connections.all() if c.connection is not None]
descriptors = []
for fd in os.listdir("/proc/self/fd"):
    try:
        descriptors.append(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        pass
shared = [d for d in descriptors if d.startswith("socket:") or d.endswith((".db", ".sqlite3"))]
print(open_connections, shared, threading.active_count())
"""


def test_the_preloaded_application_holds_nothing_a_forked_worker_would_share() -> None:
    """No database connection, socket or thread open once the WSGI application is loaded: what
    the parent holds, every worker would hold too (``preload_app``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORT_")}
    done = subprocess.run(
        [sys.executable, "-c", PRE_FORK_STATE], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == "[] [] 1"
