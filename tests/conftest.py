from __future__ import annotations

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
