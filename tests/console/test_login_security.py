"""Sign-in hardening: throttled logins (console and Django admin), password validators, and a
production configuration that ``manage.py check --deploy`` finds clean."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from tests.factories import Env

STRONG = "correct horse battery staple 42"
ROOT = Path(__file__).resolve().parents[2]


def _signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


@pytest.mark.parametrize(
    ("login_path", "staff"), [("/login/", False), ("/admin/login/", True)], ids=["console", "admin"]
)
def test_thirty_wrong_passwords_lock_the_account_out(
    env: Env, login_path: str, staff: bool
) -> None:
    env.owner.set_password(STRONG)
    env.owner.is_staff = staff
    env.owner.save()
    client = Client()
    for attempt in range(30):
        client.post(login_path, {"username": env.owner.username, "password": f"guess-{attempt}"})
        assert not _signed_in(client)
    right = client.post(login_path, {"username": env.owner.username, "password": STRONG})
    assert right.status_code == 429, right.status_code
    assert b"Too many failed sign-ins" in right.content
    assert not _signed_in(client)


def test_a_few_typos_do_not_lock_anyone_out(env: Env) -> None:
    env.owner.set_password(STRONG)
    env.owner.save()
    client = Client()
    for attempt in range(3):
        client.post("/login/", {"username": env.owner.username, "password": f"typo-{attempt}"})
    right = client.post("/login/", {"username": env.owner.username, "password": STRONG})
    assert right.status_code == 302
    assert _signed_in(client)


def test_weak_passwords_are_refused_by_create_user(db: None) -> None:
    with pytest.raises(CommandError, match="password"):
        call_command("create_user", "weakling", "--password", "demo")
    assert not get_user_model().objects.filter(username="weakling").exists()
    call_command("create_user", "strong", "--password", STRONG)
    assert get_user_model().objects.get(username="strong").check_password(STRONG)


def test_seed_demo_still_creates_the_demo_login(db: None) -> None:
    call_command("seed_demo")
    client = Client()
    assert client.post("/login/", {"username": "demo", "password": "demo"}).status_code == 302
    assert _signed_in(client)


def test_check_deploy_is_clean_with_production_settings(tmp_path: Path) -> None:
    production = {
        "PATH": os.environ.get("PATH", ""),
        "DATABASE_URL": os.environ.get("DATABASE_URL", ""),
        "SECRET_KEY": "a-production-secret-" + "k" * 50,
        "XMEMO_DEBUG": "0",
        "XMEMO_SECURE_COOKIES": "1",
        "ALLOWED_HOSTS": "skills.example.com",
        "XMEMO_VAR_DIR": str(tmp_path),
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=production,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
