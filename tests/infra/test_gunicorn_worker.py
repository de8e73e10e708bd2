"""The gunicorn worker hands usage counts on while it idles (``xmemo/gunicorn_worker.py``): it
wakes at least every ``usage.HANDOFF_SECONDS`` and hands on what fell due at each turn of its
loop. The real server end to end: ``tests/e2e/test_usage.py``."""

from __future__ import annotations

import ast
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
