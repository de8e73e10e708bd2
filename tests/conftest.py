from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.factories import Env, build_env


@pytest.fixture
def env(db: None) -> Env:
    """Users (owner, admin, member, outsider), a personal and a team workspace."""
    return build_env()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True, scope="session")
def _tasks_in_process() -> Iterator[None]:
    """Jobs run in-process in tests, as in the embedded default; tests/e2e starts real workers."""
    from xmemo.celery import app

    app.conf.task_always_eager = True
    yield
