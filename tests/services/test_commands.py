"""The admin commands of docs/contract.md §15, exactly as scripts call them."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.utils import timezone

from skills_app.domain.tokens import token_hash
from skills_app.models import ApiToken, Membership, Skill, SkillRevision, Workspace

User = get_user_model()


def _call(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.mark.django_db
def test_create_user_is_idempotent_and_silent() -> None:
    password = "a long enough passphrase 7"
    assert _call("create_user", "alice", "--email", "a@example.com", "--password", password) == (
        "",
        "",
    )
    assert _call("create_user", "alice") == ("", "")
    user = get_user_model().objects.get(username="alice")
    assert user.check_password(password)
    ws = Workspace.objects.get(slug="alice")
    assert ws.kind == "personal"
    assert Membership.objects.get(workspace=ws).role == "owner"
    assert Workspace.objects.count() == 1


@pytest.mark.django_db
def test_create_token_prints_the_token_alone() -> None:
    _call("create_user", "bob")
    out, _ = _call("create_token", "bob")
    assert out.endswith("\n")
    assert out.count("\n") == 1
    secret = out.strip()
    token = ApiToken.objects.get(secret_hash=token_hash(secret))
    assert token.scopes == ["skills:read", "skills:write"]
    assert token.client_profile == "ordinary-full"
    assert token.workspace is None
    assert secret not in str(ApiToken.objects.values_list())


@pytest.mark.django_db
def test_create_token_options() -> None:
    _call("create_user", "carol")
    out, _ = _call(
        "create_token",
        "carol",
        "--scopes",
        "skills:read",
        "--workspace",
        "carol",
        "--profile",
        "claude-code",
        "--name",
        "ci",
    )
    token = ApiToken.objects.get(secret_hash=token_hash(out.strip()))
    assert (token.scopes, token.workspace.slug, token.client_profile, token.name) == (
        ["skills:read"],
        "carol",
        "claude-code",
        "ci",
    )
    with pytest.raises(CommandError):
        _call("create_token", "carol", "--scopes", "skills:fly")
    with pytest.raises(CommandError):
        _call("create_token", "nobody")


@pytest.mark.django_db
def test_seed_demo_is_idempotent_and_has_skills_in_several_states() -> None:
    out, _ = _call("seed_demo", "--print-credentials")
    assert "Demo login: demo / demo" in out
    secret = out.split("Demo token: ")[1].strip()
    assert ApiToken.objects.filter(secret_hash=token_hash(secret)).exists()
    counts = (Skill.objects.count(), SkillRevision.objects.count())
    _call("seed_demo")
    assert (Skill.objects.count(), SkillRevision.objects.count()) == counts
    states = set(SkillRevision.objects.values_list("state", flat=True))
    assert {"draft", "proposed", "published", "deprecated"} - states <= {"deprecated"}
    assert SkillRevision.objects.filter(state="proposed", skill__slug="deploy-runbook").exists()
    assert SkillRevision.objects.filter(state="published", skill__slug="deploy-runbook").exists()
    assert Workspace.objects.filter(kind="team").count() == 1
    # The demo team keeps a new team's rule: nobody approved their own proposal.
    assert Workspace.objects.get(kind="team").require_distinct_reviewer is True
    reviewed = SkillRevision.objects.exclude(reviewed_by=None)
    assert reviewed.exists()
    assert all(r.reviewed_by_id != r.author_id for r in reviewed)
    assert SkillRevision.objects.filter(components__type="artifact").exists()


@pytest.mark.django_db
def test_seed_demo_reuses_the_token_in_its_file_and_keeps_the_password_hash(
    tmp_path: Path,
) -> None:
    """Issue 37 #15: every `make run` minted another never-expiring all-scope demo token and
    set the demo password again (a new hash, which signs out every session). The token kept in
    --token-file (0600) is printed again while it works; a revoked one is replaced."""
    kept = tmp_path / "demo-token"
    first, _ = _call("seed_demo", "--print-credentials", "--token-file", str(kept))
    password = User.objects.get(username="demo").password
    again, _ = _call("seed_demo", "--print-credentials", "--token-file", str(kept))
    assert again == first
    assert User.objects.get(username="demo").password == password
    secret = first.split("Demo token: ")[1].strip()
    assert kept.read_text().strip() == secret
    assert kept.stat().st_mode & 0o777 == 0o600
    assert ApiToken.objects.filter(user__username="demo").count() == 1
    ApiToken.objects.filter(secret_hash=token_hash(secret)).update(revoked_at=timezone.now())
    renewed, _ = _call("seed_demo", "--print-credentials", "--token-file", str(kept))
    assert renewed != first
    assert kept.read_text().strip() == renewed.split("Demo token: ")[1].strip()


@pytest.mark.django_db
def test_seed_demo_shows_two_skills_with_trigger_checks_one_colliding() -> None:
    """Issue 40: a new user sees trigger checks in ``make run``: db-restore is served, the
    proposed db-migrate also wins its tasks."""
    from skills_app.services.evals import evaluation_compute

    _call("seed_demo")
    served = SkillRevision.objects.get(skill__slug="db-restore", state="published")
    proposal = SkillRevision.objects.get(skill__slug="db-migrate", state="proposed")
    checks = evaluation_compute(revision=proposal)
    assert checks is not None
    assert [c["slug"] for c in checks.figures["collisions"]["wins_from"]] == ["db-restore"]
    restore = evaluation_compute(revision=served)
    assert restore is not None
    assert restore.figures["recall_at_1"] == 1.0
