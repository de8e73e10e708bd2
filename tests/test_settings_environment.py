"""Settings read the environment through typed helpers (xmemo/environment.py): a bad value stops
the start with ImproperlyConfigured naming its variable and what it expected."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

_IMPORT = (
    "import os; os.environ['DJANGO_SETTINGS_MODULE'] = 'xmemo.settings'\n"
    "from django.conf import settings\n"
    "print(repr((settings.XMEMO_USAGE_FLUSH_SECONDS, settings.XMEMO_RATE_LIMIT, settings.DEBUG,"
    " settings.XMEMO_DB_POOL_MAX_SIZE, settings.XMEMO_OAUTH_UNUSED_CLIENT_HOURS)))\n"
)


def _import_settings(**env: str) -> subprocess.CompletedProcess[str]:
    # The embedded default, whatever this run's database: no DATABASE_URL, no REDIS_URL.
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("XMEMO_", "DJANGO_")) and k not in ("DATABASE_URL", "REDIS_URL")
    }
    clean.update(PYTHONPATH=str(ROOT), SECRET_KEY="test-only", **env)
    return subprocess.run(
        [sys.executable, "-c", _IMPORT],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("XMEMO_USAGE_FLUSH_SECONDS", "abc", "a number of seconds"),
        ("XMEMO_RATE_LIMIT", "x", "a rate such as 6000/min"),
        ("XMEMO_RATE_LIMIT_SIGNUP", "10/fortnight", "a rate such as 6000/min"),
        ("XMEMO_DEBUG", "maybe", "a boolean"),
        ("XMEMO_DB_POOL_MAX_SIZE", "ten", "a whole number"),
        ("XMEMO_CONN_MAX_AGE", "-5", "a whole number of at least 0"),
        ("XMEMO_OAUTH_UNUSED_CLIENT_HOURS", "a day", "a number of hours"),
        ("SECRET_KEY_FILE", "/nonexistent/secret", "a readable UTF-8 file"),
    ],
)
def test_a_bad_value_names_its_variable(name: str, value: str, expected: str) -> None:
    result = _import_settings(**{name: value})
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("django.core.exceptions.ImproperlyConfigured: "), result.stderr
    assert f"{name}={value!r}: expected {expected}" in last
    assert "ValueError" not in result.stderr


def test_the_defaults_and_good_values_are_read_as_before() -> None:
    defaults = _import_settings(XMEMO_DEBUG="")
    assert defaults.returncode == 0, defaults.stderr
    assert defaults.stdout.strip() == repr((10.0, "6000/min", True, 0, 24.0))
    given = _import_settings(
        XMEMO_USAGE_FLUSH_SECONDS="2.5",
        XMEMO_RATE_LIMIT="",  # empty: no limit
        XMEMO_DEBUG="Off",
        XMEMO_ASGI="yes",  # the pool's default follows
        XMEMO_OAUTH_UNUSED_CLIENT_HOURS="1",
    )
    assert given.returncode == 0, given.stderr
    assert given.stdout.strip() == repr((2.5, "", False, 10, 1.0))


def test_a_stored_secret_is_written_once_0600_and_read_back(tmp_path: Path) -> None:
    """Issue 37 #15: the embedded default's SECRET_KEY lives in var/secret_key, so a restart
    keeps it; an existing database keeps the fixed key it was made with (``initial``)."""
    from xmemo.environment import stored_secret

    path = tmp_path / "secret_key"
    made = stored_secret(path)
    assert len(made) >= 50
    assert path.stat().st_mode & 0o777 == 0o600
    assert stored_secret(path, initial="other") == made
    assert stored_secret(tmp_path / "legacy", initial="old-fixed-key") == "old-fixed-key"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["legacy", "secret_key"]
