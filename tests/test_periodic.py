"""One scheduler (docs/operations.md, "Periodic work"): every periodic job is an entry of
``settings.CELERY_BEAT_SCHEDULE`` naming a task the workers have; `celery beat` sends them in
production and `make run` runs the same entries in its own process. Each task's own test calls it
as a worker does, twice where it matters (idempotent): tests/jobs/test_outbox.py,
tests/jobs/test_job_recovery.py, tests/services/test_embeddings.py, tests/api/test_usage.py,
tests/oauth/test_abuse_limits.py; on real workers over Redis, tests/e2e."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.conf import settings

from skills_app.models import UsageDay
from tests.factories import publish
from tests.support import wait_until
from xmemo.celery import app

PERIODIC = {
    "fail_stale_jobs",
    "sweep_outbox",
    "sweep_embeddings",
    "sweep_scans",
    "catch_up_evals",
    "flush_usage",
    "expire_oauth_clients",
}


def test_every_periodic_job_is_a_beat_entry_of_a_task_the_workers_have() -> None:
    app.loader.import_default_modules()
    schedule = settings.CELERY_BEAT_SCHEDULE
    assert set(schedule) >= PERIODIC
    for name, entry in schedule.items():
        assert entry["task"] in app.tasks, name
        # A message no worker took within its interval expires: the next one is on its way.
        assert entry["options"]["expires"] == entry["schedule"], name
    assert app.conf.beat_schedule == schedule


@pytest.mark.django_db(transaction=True)
def test_make_run_runs_the_schedule_in_its_own_process() -> None:
    """The embedded runner's beat thread runs the entries here (tasks run in-process): usage
    counted by this process reaches the database without any worker."""
    from skills_app.infra import usage
    from tests.factories import build_env
    from xmemo import run

    env = build_env()
    revision = publish(env.owner, env.personal, slug="scheduled").revision
    every_day = app.conf.beat_schedule
    fast = {**every_day["flush_usage"], "schedule": 0.2}
    app.conf.beat_schedule = {"flush_usage": fast}
    usage.count(revision_pk=revision.pk, client="agent", level=1)
    schedule = run._schedule()
    try:
        wait_until(
            lambda: UsageDay.objects.filter(revision=revision, level1=1).exists(),
            60,
            interval=0.2,
            message="the runner's schedule never flushed the count",
        )
    finally:
        schedule.stop()
        app.conf.beat_schedule = every_day
    schedule.join(timeout=10)
    assert not schedule.is_alive()


ROOT = Path(__file__).resolve().parents[1]
# The embedded runner (`make run`) is the one place allowed to start a thread: its
# announcement and the beat schedule it runs in-process.
EMBEDDED_RUNNER = ROOT / "xmemo" / "run.py"


def _threads_started(path: Path) -> list[str]:
    """``threading.Thread``/``Timer`` (called or subclassed) and ``_thread`` starts in ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module in ("threading", "_thread")
        for alias in node.names
        if alias.name in ("Thread", "Timer", "start_new_thread")
    }
    found = []
    for node in ast.walk(tree):
        targets = [node.func] if isinstance(node, ast.Call) else []
        targets += node.bases if isinstance(node, ast.ClassDef) else []
        for target in targets:
            name = ast.unparse(target)
            if name in imported or name in (
                "threading.Thread",
                "threading.Timer",
                "_thread.start_new_thread",
            ):
                found.append(f"{path.relative_to(ROOT)}:{target.lineno}: {name}")
    return found


def test_no_product_code_starts_a_thread_outside_the_embedded_runner() -> None:
    """Periodic work is a beat entry, not a thread a web or worker process starts (a request's
    own helpers, such as asgiref's ``sync_to_async``, are the libraries' business)."""
    sources = sorted((ROOT / "skills_app").rglob("*.py")) + sorted((ROOT / "xmemo").rglob("*.py"))
    found = [hit for path in sources if path != EMBEDDED_RUNNER for hit in _threads_started(path)]
    assert found == []
    assert _threads_started(EMBEDDED_RUNNER)  # the grep sees what it looks for
