"""Sandboxed execution as a job: protocol round trip, class gating, failing closed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skills_app import errors
from skills_app.domain.bundle import ComponentData
from skills_app.models import Job, SkillRevision
from skills_app.services.jobs import execute_start
from tests.factories import Env, actor_for, save

PY_SCRIPT = b"""import json, sys
args = json.load(sys.stdin)
print("working", file=sys.stderr)
print(json.dumps({"sum": args["a"] + args["b"]}))
"""
SH_SCRIPT = b"""#!/bin/sh
read -r line
echo "log line" >&2
printf '{"echo": %s}' "$line"
"""


@pytest.fixture
def run_now(django_capture_on_commit_callbacks: Any) -> Callable[..., Job]:
    def start(**kwargs: Any) -> Job:
        with django_capture_on_commit_callbacks(execute=True):
            job = execute_start(**kwargs)
        job.refresh_from_db()
        return job

    return start


def _script_revision(
    env: Env, workspace: Any, *, cls: str = "safe", extra: tuple = ()
) -> SkillRevision:
    return save(
        env.owner,
        workspace,
        slug=f"tool-{cls}",
        frontmatter={"class": cls, "timeout_seconds": 10},
        components=(
            ComponentData("scripts/add.py", "script", PY_SCRIPT, "text/x-python"),
            ComponentData("scripts/echo.sh", "script", SH_SCRIPT, "text/x-shellscript"),
            ComponentData("notes.md", "document", b"not a script", "text/markdown"),
            *extra,
        ),
    ).revision


def test_python_and_shell_scripts_return_their_json(
    env: Env, bwrap: str, run_now: Callable[..., Job]
) -> None:
    rev = _script_revision(env, env.personal)
    actor = actor_for(env.owner)
    job = run_now(actor=actor, revision=rev, resource="scripts/add.py", args={"a": 2, "b": 40})
    assert job.state == "succeeded", job.error
    assert job.result["output"] == {"sum": 42}
    assert "working" in job.log
    job = run_now(actor=actor, revision=rev, resource="scripts/echo.sh", args={"k": 1})
    assert job.state == "succeeded", job.error
    assert job.result["output"] == {"echo": {"k": 1}}


def test_non_scripts_and_missing_resources_are_refused(env: Env) -> None:
    rev = _script_revision(env, env.personal)
    with pytest.raises(errors.ValidationFailed):
        execute_start(actor=actor_for(env.owner), revision=rev, resource="notes.md", args={})
    with pytest.raises(errors.NotFound):
        execute_start(actor=actor_for(env.owner), revision=rev, resource="nope.py", args={})
    assert not Job.objects.exists()


def test_missing_bubblewrap_fails_closed(
    env: Env, settings: Any, tmp_path: Path, run_now: Callable[..., Job]
) -> None:
    marker = tmp_path / "ran"
    script = (
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('x')\nprint('{{}}')\n".encode()
    )
    rev = _script_revision(
        env, env.personal, extra=(ComponentData("scripts/mark.py", "script", script),)
    )
    settings.XMEMO_BWRAP_PATH = str(tmp_path / "no-such-bwrap")
    job = run_now(actor=actor_for(env.owner), revision=rev, resource="scripts/mark.py", args={})
    assert job.state == "failed"
    assert job.error["code"] == "SANDBOX_UNAVAILABLE"
    assert not marker.exists()


# role → class → allowed? (issue: safe for members with the scope, mutating for admins and
# owners, dangerous only for owners and only when the workspace allows it)
GATING = {
    "member": {"safe": True, "mutating": False, "dangerous": False},
    "admin": {"safe": True, "mutating": True, "dangerous": False},
    "owner": {"safe": True, "mutating": True, "dangerous": True},
}


def _dual_signed(env: Env, revision: SkillRevision) -> None:
    """What a team's dangerous script needs besides its class rules (docs/contract.md §21): the
    dual-sign-required mode and two sign-offs by reviewers other than its author (the owner)."""
    from skills_app.models import Membership, RevisionApproval, Workspace

    Workspace.objects.filter(pk=env.team.pk).update(permission_mode="dual-sign-required")
    Membership.objects.filter(workspace=env.team, user=env.member2).update(role="admin")
    for reviewer in (env.admin, env.member2):
        RevisionApproval.objects.create(revision=revision, user=reviewer)
    revision.workspace.refresh_from_db()


@pytest.mark.parametrize("role", ["member", "admin", "owner"])
@pytest.mark.parametrize("cls", ["safe", "mutating", "dangerous"])
@pytest.mark.parametrize("dangerous_allowed", [True, False])
def test_class_gating(env: Env, role: str, cls: str, dangerous_allowed: bool) -> None:
    env.team.allow_dangerous_scripts = dangerous_allowed
    env.team.save()
    rev = _script_revision(env, env.team, cls=cls)
    if cls == "dangerous":
        _dual_signed(env, rev)
    allowed = GATING[role][cls] and (cls != "dangerous" or dangerous_allowed)
    actor = actor_for(env.role_user(role))
    run: dict[str, Any] = {"resource": "scripts/add.py", "args": {}, "confirm": True}
    if allowed:
        assert execute_start(actor=actor, revision=rev, **run).kind == "execute"
    else:
        with pytest.raises(errors.PermissionDenied):
            execute_start(actor=actor, revision=rev, **run)


def test_execute_needs_the_scope(env: Env) -> None:
    from tests.factories import make_token

    token, _ = make_token(env.owner, scopes=["skills:read", "skills:write"])
    rev = _script_revision(env, env.personal)
    with pytest.raises(errors.PermissionDenied):
        execute_start(
            actor=actor_for(env.owner, token=token),
            revision=rev,
            resource="scripts/add.py",
            args={},
        )


@pytest.fixture
def script_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every script the job runner hands to the sandbox (the real runner still runs it)."""
    from skills_app.sandbox import run_script as real
    from skills_app.services.jobs import run

    ran: list[str] = []

    def recording(**kwargs: Any) -> Any:
        ran.append(kwargs["entry"])
        return real(**kwargs)

    monkeypatch.setattr(run, "run_script", recording)
    return ran


def _queued_then_run(
    capture: Any, *, actor: Any, revision: SkillRevision, change: Callable[[], object]
) -> Job:
    """Queue the job (not yet run), ``change`` the world, then let the worker start it."""
    with capture(execute=False) as queued:
        job = execute_start(
            actor=actor,
            revision=revision,
            resource="scripts/add.py",
            args={"a": 1, "b": 2},
            confirm=True,
        )
    assert len(queued) == 1
    job.refresh_from_db()
    assert job.state == "queued"
    change()
    for dispatch in queued:
        dispatch()
    job.refresh_from_db()
    return job


def test_a_dangerous_job_does_not_start_once_the_switch_is_off(
    env: Env, django_capture_on_commit_callbacks: Any, script_runs: list[str]
) -> None:
    env.team.allow_dangerous_scripts = True
    env.team.save()
    rev = _script_revision(env, env.team, cls="dangerous")
    _dual_signed(env, rev)

    def switch_off() -> None:
        from skills_app.models import Workspace

        Workspace.objects.filter(pk=env.team.pk).update(allow_dangerous_scripts=False)

    job = _queued_then_run(
        django_capture_on_commit_callbacks,
        actor=actor_for(env.owner),
        revision=rev,
        change=switch_off,
    )
    assert job.state == "failed", job.result
    assert job.error["code"] == "PERMISSION_DENIED"
    assert "dangerous" in job.error["message"]
    assert "when the job started" in job.error["message"]
    assert script_runs == []
    assert job.result is None
    assert job.log == ""


def test_a_mutating_job_does_not_start_once_its_admin_is_demoted(
    env: Env, django_capture_on_commit_callbacks: Any, script_runs: list[str]
) -> None:
    from skills_app.models import Membership

    rev = _script_revision(env, env.team, cls="mutating")
    job = _queued_then_run(
        django_capture_on_commit_callbacks,
        actor=actor_for(env.admin),
        revision=rev,
        change=lambda: Membership.objects.filter(workspace=env.team, user=env.admin).update(
            role="member"
        ),
    )
    assert job.state == "failed", job.result
    assert job.error["code"] == "PERMISSION_DENIED"
    assert job.error["details"]["role"] == "member"
    assert script_runs == []


def test_a_workspace_token_s_job_is_gated_by_the_token_s_role_when_it_starts(
    env: Env, django_capture_on_commit_callbacks: Any, script_runs: list[str]
) -> None:
    """A workspace's admin token queues a mutating script, then is turned into a member
    token: the job runs with the token's role, not with its creator's (the owner's)."""
    from skills_app.models import ApiToken
    from tests.factories import ALL_SCOPES, make_token

    token, _ = make_token(env.owner, ALL_SCOPES, workspace=env.team, role="admin")
    rev = _script_revision(env, env.team, cls="mutating")
    job = _queued_then_run(
        django_capture_on_commit_callbacks,
        actor=actor_for(env.owner, token=token),
        revision=rev,
        change=lambda: ApiToken.objects.filter(pk=token.pk).update(role="member"),
    )
    assert job.state == "failed", job.result
    assert job.error["code"] == "PERMISSION_DENIED"
    assert script_runs == []


def test_a_job_still_allowed_when_it_starts_runs(
    env: Env, bwrap: str, django_capture_on_commit_callbacks: Any, script_runs: list[str]
) -> None:
    rev = _script_revision(env, env.team, cls="mutating")
    job = _queued_then_run(
        django_capture_on_commit_callbacks,
        actor=actor_for(env.admin),
        revision=rev,
        change=lambda: None,
    )
    assert job.state == "succeeded", job.error
    assert script_runs == ["scripts/add.py"]
