"""Dual sign-off (docs/contract.md §21): the team's permission_mode and a token's stricter one;
``confirm`` for mutating scripts; two distinct non-author approvals for dangerous ones, in
dual-sign-required; each checked when the job is queued and again when it starts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from skills_app import errors
from skills_app.domain.bundle import ComponentData
from skills_app.models import AuditEntry, Job, Membership, SkillRevision
from skills_app.selectors.reviews import revision_sign_offs
from skills_app.services.accounts import token_create
from skills_app.services.jobs import execute_start
from skills_app.services.jobs.run import job_run
from skills_app.services.skills import revision_transition
from skills_app.services.workspace_settings import workspace_settings_update
from tests.factories import Env, actor_for, make_token, save

SCRIPT = b"import json, sys\njson.dump({'ok': True}, sys.stdout)\n"
RUN = "scripts/run.py"


def _published(env: Env, cls: str) -> SkillRevision:
    """A member's script of ``cls``, approved by the owner (one sign-off)."""
    rev = save(
        env.member,
        env.team,
        slug=f"tool-{cls}",
        intent="publish",
        frontmatter={"class": cls},
        components=(ComponentData(RUN, "script", SCRIPT),),
    ).revision
    return revision_transition(actor=actor_for(env.owner), revision=rev, action="approve")


def _mode(env: Env, mode: str, **more: Any) -> None:
    workspace_settings_update(
        actor=actor_for(env.owner), workspace=env.team, permission_mode=mode, **more
    )
    env.team.refresh_from_db()


def _start(actor: Any, rev: SkillRevision, **kwargs: Any) -> Job:
    fresh = SkillRevision.objects.select_related("workspace").get(pk=rev.pk)  # as a request reads
    return execute_start(actor=actor, revision=fresh, resource=RUN, args={}, **kwargs)


def test_a_mutating_script_runs_only_with_confirm(env: Env) -> None:
    rev = _published(env, "mutating")
    admin = actor_for(env.admin)
    with pytest.raises(errors.ConfirmationRequired) as refused:
        _start(admin, rev)
    assert refused.value.status == 409
    assert _start(admin, rev, confirm=True).params["confirm"] is True


def test_read_only_runs_only_safe_scripts(env: Env) -> None:
    safe, mutating = _published(env, "safe"), _published(env, "mutating")
    _mode(env, "read-only")
    assert _start(actor_for(env.member), safe).kind == "execute"
    with pytest.raises(errors.PermissionDenied, match="read-only"):
        _start(actor_for(env.owner), mutating, confirm=True)


def test_a_tokens_stricter_mode_wins(env: Env) -> None:
    safe, mutating = _published(env, "safe"), _published(env, "mutating")
    token, _ = make_token(env.admin, workspace=env.team, permission_mode="read-only")
    via_token = actor_for(env.admin, token=token)
    assert _start(via_token, safe).kind == "execute"
    with pytest.raises(errors.PermissionDenied, match="read-only"):
        _start(via_token, mutating, confirm=True)
    # A token made with it is never looser.
    with pytest.raises(errors.PermissionDenied):
        token_create(
            actor=via_token,
            user=env.admin,
            name="child",
            scopes=["skills:execute"],
            workspace=env.team,
            permission_mode="mutating-with-confirm",
        )


def test_dangerous_needs_dual_sign_required_and_two_non_author_sign_offs(
    env: Env, bwrap: str, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    rev = _published(env, "dangerous")
    owner = actor_for(env.owner)
    _mode(env, "mutating-with-confirm", allow_dangerous_scripts=True)
    with pytest.raises(errors.PermissionDenied, match="dual-sign-required"):
        _start(owner, rev, confirm=True)
    _mode(env, "dual-sign-required")
    assert revision_sign_offs(rev) == [env.owner.username]
    with pytest.raises(errors.PermissionDenied, match="second sign-off") as one:
        _start(owner, rev, confirm=True)
    assert one.value.details["sign_offs"] == 1
    # The author never signs off; another reviewer's approval of the published revision does.
    with pytest.raises(errors.PermissionDenied):
        revision_transition(actor=actor_for(env.member), revision=rev, action="approve")
    revision_transition(actor=actor_for(env.admin), revision=rev, action="approve")
    assert AuditEntry.objects.filter(action="skills.revision.sign_off").count() == 1
    assert revision_sign_offs(rev) == [env.owner.username, env.admin.username]
    with pytest.raises(errors.Conflict):
        revision_transition(actor=actor_for(env.admin), revision=rev, action="approve")
    with pytest.raises(errors.ConfirmationRequired):
        _start(owner, rev)
    with django_capture_on_commit_callbacks(execute=True):
        job = _start(owner, rev, confirm=True)
    job.refresh_from_db()
    assert (job.state, job.result["output"]) == ("succeeded", {"ok": True}), job.error


def test_each_rule_is_checked_again_when_the_job_starts(env: Env) -> None:
    rev = _published(env, "dangerous")
    _mode(env, "dual-sign-required", allow_dangerous_scripts=True)
    revision_transition(actor=actor_for(env.admin), revision=rev, action="approve")
    queued = _start(actor_for(env.owner), rev, confirm=True)
    # A demoted approver no longer counts: one sign-off left when the job starts.
    Membership.objects.filter(workspace=env.team, user=env.admin).update(role="member")
    job_run(job_id=queued.job_id)
    queued.refresh_from_db()
    assert (queued.state, queued.error["code"]) == ("failed", "PERMISSION_DENIED")
    assert queued.error["details"]["checked"] == "start"
    assert "second sign-off" in queued.error["message"]

    mutating = _published(env, "mutating")
    queued = _start(actor_for(env.owner), mutating, confirm=True)
    _mode(env, "read-only")  # the mode changed while it was queued
    job_run(job_id=queued.job_id)
    queued.refresh_from_db()
    assert (queued.state, queued.error["code"]) == ("failed", "PERMISSION_DENIED")
    assert "read-only" in queued.error["message"]


def test_the_mode_is_a_teams_setting_and_audited(env: Env) -> None:
    _mode(env, "dual-sign-required")
    entry = AuditEntry.objects.filter(action="workspace.settings.change").latest("id")
    assert entry.data["permission_mode"]["to"] == "dual-sign-required"
    with pytest.raises(errors.ValidationFailed):
        workspace_settings_update(
            actor=actor_for(env.owner), workspace=env.personal, permission_mode="read-only"
        )
    with pytest.raises(errors.ValidationFailed):
        _mode(env, "anything-goes")
