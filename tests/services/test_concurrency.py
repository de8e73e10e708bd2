"""Concurrent saves and publishes on PostgreSQL: gap-free numbers, exactly one published."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection

from skills_app.models import SkillRevision
from skills_app.services.skills import revision_transition
from tests.factories import Env, actor_for, save
from tests.support import require_service

N = 20


def _run_threads(work: Callable[[int], object]) -> list[BaseException]:
    barrier = threading.Barrier(N)
    failures: list[BaseException] = []

    def runner(i: int) -> None:
        try:
            barrier.wait()
            work(i)
        except BaseException as exc:
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=runner, args=(i,)) for i in range(N)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failures


@pytest.fixture
def postgres() -> None:
    require_service(
        "PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL to a PostgreSQL database"
    )


@pytest.mark.django_db(transaction=True)
def test_concurrent_saves_get_gap_free_numbers(env: Env, postgres: None) -> None:
    failures = _run_threads(
        lambda i: save(env.owner, env.personal, slug="race", instruction_body=f"body {i}")
    )
    assert failures == []
    numbers = sorted(
        SkillRevision.objects.filter(skill__slug="race").values_list("revision_number", flat=True)
    )
    assert numbers == list(range(1, N + 1))


@pytest.mark.django_db(transaction=True)
def test_concurrent_publishes_leave_exactly_one_published(env: Env, postgres: None) -> None:
    revisions = [
        save(
            env.member, env.team, slug="race", instruction_body=f"body {i}", intent="publish"
        ).revision
        for i in range(N)
    ]
    assert {r.state for r in revisions} == {"proposed"}
    failures = _run_threads(
        lambda i: revision_transition(
            actor=actor_for(env.owner), revision=revisions[i], action="approve"
        )
    )
    assert failures == []
    states = list(SkillRevision.objects.filter(skill__slug="race").values_list("state", flat=True))
    assert states.count("published") == 1
    assert states.count("deprecated") == N - 1
