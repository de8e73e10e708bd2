"""Secrets at rest: Fernet under XMEMO_SECRETS_KEY, rotation, and the SECRET_KEY fallback."""

from __future__ import annotations

from typing import Any

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command

from skills_app import errors
from skills_app.models import WorkspaceSecret
from skills_app.selectors.secrets import script_environment
from skills_app.services.workspace_settings import workspace_secret_set
from tests.factories import Env, actor_for


def _set(env: Env, name: str, value: str) -> WorkspaceSecret:
    return workspace_secret_set(
        actor=actor_for(env.owner), workspace=env.team, name=name, value=value
    )


def test_the_script_environment_holds_only_named_secrets_of_that_workspace(env: Env) -> None:
    _set(env, "DEPLOY_TOKEN", "t0ken")
    _set(env, "UNNAMED", "not asked for")
    workspace_secret_set(
        actor=actor_for(env.owner), workspace=env.personal, name="OTHER_WS", value="elsewhere"
    )
    got = script_environment(
        workspace=env.team, names=["DEPLOY_TOKEN", "OTHER_WS", "PATH", "SECRET_KEY"]
    )
    assert got == {"DEPLOY_TOKEN": "t0ken"}


def test_rotation_moves_every_secret_to_the_new_key(env: Env, settings: Any) -> None:
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.XMEMO_SECRETS_KEY = [old]
    stored = _set(env, "DEPLOY_TOKEN", "rotate-me")
    assert Fernet(old.encode()).decrypt(stored.ciphertext.encode()) == b"rotate-me"
    settings.XMEMO_SECRETS_KEY = [new, old]
    call_command("rotate_workspace_secrets")
    stored.refresh_from_db()
    assert Fernet(new.encode()).decrypt(stored.ciphertext.encode()) == b"rotate-me"
    settings.XMEMO_SECRETS_KEY = [new]  # the old key can go now
    assert script_environment(workspace=env.team, names=["DEPLOY_TOKEN"]) == {
        "DEPLOY_TOKEN": "rotate-me"
    }


def test_without_a_key_setting_secrets_use_a_key_derived_from_secret_key(
    env: Env, settings: Any
) -> None:
    settings.XMEMO_SECRETS_KEY = []
    _set(env, "DEPLOY_TOKEN", "derived")
    # Setting a key later keeps what the derived key stored readable (until rotated).
    settings.XMEMO_SECRETS_KEY = [Fernet.generate_key().decode()]
    assert script_environment(workspace=env.team, names=["DEPLOY_TOKEN"]) == {
        "DEPLOY_TOKEN": "derived"
    }
    # A value no configured key opens fails the job with a reason, never a silent empty env.
    settings.SECRET_KEY = "a-different-secret-key"
    with pytest.raises(errors.JobFailed) as failed:
        script_environment(workspace=env.team, names=["DEPLOY_TOKEN"])
    assert failed.value.details == {"secret": "DEPLOY_TOKEN"}
