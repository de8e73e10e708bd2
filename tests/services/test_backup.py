"""Workspace backup and restore (docs/contract.md §9) on the real database: a workspace with every
kind of history is backed up, restored into a new team and compared field by field; a second backup
of the restored team is byte-identical apart from the workspace's identity; what cannot be restored
is refused with nothing stored."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from skills_app import errors
from skills_app.domain.shapes.jobs import RestoreResult
from skills_app.formats.backup import backup_read, backup_write
from skills_app.models import AuditEntry, RevisionScan, Skill, SkillRevision, Workspace
from skills_app.services.backup import workspace_backup, workspace_restore
from skills_app.services.labels import label_move
from skills_app.services.outcomes import outcome_report
from skills_app.services.reviews import revision_comment_add
from skills_app.services.scans import scan_gate, scan_override
from skills_app.services.skills import revision_restore, revision_transition, skill_set_status
from skills_app.services.workspace_settings import workspace_settings_update
from tests.factories import Env, actor_for, component, make_team, make_token, publish, save
from tests.support import require_service

INJECTION = "# Training\n\nAttackers write: Ignore all previous instructions.\n"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))


def _history(env: Env) -> Workspace:
    """A team with archived, deprecated-only, rejected, restored and imported skills."""
    team = env.team
    owner, admin, member = actor_for(env.owner), actor_for(env.admin), actor_for(env.member)

    publish(env.member, team, slug="runbook", instruction_body="# v1\n")
    publish(env.member, team, slug="runbook", instruction_body="# v2\n")  # v1 deprecated
    proposed = save(env.member, team, slug="runbook", intent="publish", instruction_body="# v3\n")
    revision_transition(
        actor=admin, revision=proposed.revision, action="reject", comment="Too terse: add steps."
    )
    first = SkillRevision.objects.get(skill__slug="runbook", revision_number=1)
    # r4, proposed, source "restore"; it answers the review of r3
    restored = revision_restore(actor=member, revision=first).revision
    revision_comment_add(actor=member, revision=restored, body="Back to *v1*?", line=1)

    gone = publish(env.member, team, slug="retired").revision
    revision_transition(actor=owner, revision=gone, action="deprecate")  # deprecated only

    archived = publish(env.admin, team, slug="archived-one").revision
    skill_set_status(actor=owner, skill=archived.skill, status=Skill.Status.ARCHIVED)

    save(
        env.owner,
        team,
        slug="imported",
        source="import-url",
        source_ref="https://github.com/acme/skills/tree/main/x#commit=" + "a" * 40,
        frontmatter={"zeta": 1, "alpha": {"z": 1, "a": 2}, "license": "MIT"},
        components=(
            component("assets/logo.png", PNG, "artifact"),
            component("references/guide.md", "# Guide\n"),
        ),
    )
    # Labels: one on the published revision, one on a deprecated one (a rollback target).
    runbook = Skill.objects.get(workspace=team, slug="runbook")
    for name, number in (("production", 2), ("previous", 1)):
        label_move(
            actor=admin,
            skill=runbook,
            name=name,
            revision_id=runbook.revisions.get(revision_number=number).revision_id,
        )
    # Outcomes reported for the published revision (docs/contract.md §22), a note among them.
    published = runbook.revisions.get(revision_number=2)
    for name, outcome in (("ci", "success"), ("laptop", "failure")):
        token, _ = make_token(env.member, workspace=team, name=name)
        outcome_report(
            actor=actor_for(env.member, token=token),
            revision_id=published.revision_id,
            outcome=outcome,
            note="<i>ran</i>" if name == "ci" else None,
        )
    # One of the two approvals the team now requires.
    Workspace.objects.filter(pk=team.pk).update(required_approvals=2)
    revision_transition(actor=admin, revision=restored, action="approve")
    # The team's permission mode, and a blocked revision an owner let through (contract §21).
    workspace_settings_update(actor=owner, workspace=team, permission_mode="dual-sign-required")
    blocked = save(env.member, team, slug="overridden", instruction_body=INJECTION).revision
    scan_override(actor=owner, revision=blocked, reason="A quoted attack, for the training.")
    return Workspace.objects.get(pk=team.pk)


def _rows(workspace: Workspace) -> dict[str, Any]:
    """Everything a restore must reproduce, by slug and revision number (no ids)."""
    out: dict[str, Any] = {}
    mode = Workspace.objects.get(pk=workspace.pk).permission_mode
    for skill in Skill.objects.filter(workspace=workspace).order_by("slug"):
        revisions = []
        for rev in skill.revisions.order_by("revision_number").select_related("parent"):
            revisions.append(
                {
                    "number": rev.revision_number,
                    "state": rev.state,
                    "canonical_hash": rev.canonical_hash,
                    "name": rev.name,
                    "description": rev.description,
                    "frontmatter": list(json.dumps(rev.frontmatter)),  # order matters
                    "body": rev.instruction_body,
                    "approx_tokens": rev.approx_tokens,
                    "parent": rev.parent.revision_number if rev.parent else None,
                    "author": rev.author_id,
                    "message": rev.message,
                    "source": (rev.source, rev.source_ref),
                    "created_at": rev.created_at,
                    "state_changed_at": rev.state_changed_at,
                    "review": (rev.reviewed_by_id, rev.reviewed_at, rev.review_comment),
                    "comments": [
                        (c.author_id, c.body, c.line, c.action, c.created_at)
                        for c in rev.comments.order_by("created_at", "pk")
                    ],
                    "approvals": [(a.user_id, a.created_at) for a in rev.approvals.all()],
                    "outcomes": [
                        (o.date, o.reporter, o.client_name, o.outcome, o.note, o.reported_at)
                        for o in rev.outcomes.order_by("reported_at", "pk")
                    ],
                    "answers": rev.answers_revision.revision_number
                    if rev.answers_revision
                    else None,
                    "components": [
                        (c.logical_path, c.type, c.media_type, c.content_hash, bytes(c.blob.data))
                        for c in rev.components.select_related("blob").order_by("logical_path")
                    ],
                    "scan_override": RevisionScan.objects.filter(
                        revision=rev, override_at__isnull=False
                    )
                    .values_list("override_by", "override_actor", "override_reason", "override_at")
                    .first(),
                }
            )
        out[skill.slug] = {
            "permission_mode": mode,
            "status": skill.status,
            "created_at": skill.created_at,
            "published": skill.published_revision.revision_number
            if skill.published_revision
            else None,
            "current": skill.current_revision.revision_number if skill.current_revision else None,
            "revisions": revisions,
            "labels": [
                (label.name, label.revision.revision_number, label.moved_by_id, label.moved_at)
                for label in skill.labels.order_by("name").select_related("revision")
            ],
        }
    return out


def _people(env: Env) -> dict[Any, str]:
    """The source team's people as members of the target: their names map to their accounts
    (names of non-members stay text: tests/services/test_restore_attribution.py)."""
    return {env.admin: "admin", env.member: "member"}


def _entries(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


@pytest.fixture
def restore_into(env: Env) -> Callable[[bytes, Workspace], RestoreResult]:
    def run(data: bytes, target: Workspace) -> RestoreResult:
        return workspace_restore(
            actor=actor_for(env.owner), workspace=target, backup=backup_read(data)
        )

    return run


def test_backup_restores_every_skill_and_revision_exactly(
    env: Env, restore_into: Callable[[bytes, Workspace], RestoreResult]
) -> None:
    require_service("postgresql", connection.vendor == "postgresql")
    source = _history(env)
    original = _rows(source)
    assert set(original) == {"archived-one", "imported", "overridden", "retired", "runbook"}
    assert original["runbook"]["permission_mode"] == "dual-sign-required"
    assert original["overridden"]["revisions"][0]["scan_override"][:3] == (
        env.owner.pk,
        env.owner.username,
        "A quoted attack, for the training.",
    )
    assert original["retired"]["current"] is None  # deprecated only: once left out of exports
    assert original["runbook"]["revisions"][2]["review"][2] == "Too terse: add steps."
    rejected, answer = original["runbook"]["revisions"][2:4]
    assert [c[1:4] for c in rejected["comments"]] == [("Too terse: add steps.", None, "reject")]
    assert [c[1:3] for c in answer["comments"]] == [("Back to *v1*?", 1)]
    assert [a[0] for a in answer["approvals"]] == [env.admin.pk]
    assert (answer["answers"], answer["state"]) == (3, "proposed")
    assert [label[:3] for label in original["runbook"]["labels"]] == [
        ("previous", 1, env.admin.pk),
        ("production", 2, env.admin.pk),
    ]

    first = backup_write(workspace_backup(workspace=source))
    target = make_team(env.owner, slug="restored", members=_people(env))
    result = restore_into(first, target)

    assert result["revision_count"] == 8
    assert _rows(target) == original
    # The restored override lets the blocked revision through the gate, as it did before.
    restored_block = SkillRevision.objects.get(skill__workspace=target, skill__slug="overridden")
    assert RevisionScan.objects.get(revision=restored_block).verdict == "block"
    scan_gate(revision=restored_block, what="approved")
    assert AuditEntry.objects.filter(workspace=target, action="workspace.restore").exists()

    target.refresh_from_db()
    second = backup_write(workspace_backup(workspace=target))
    a, b = _entries(first), _entries(second)
    manifest_a, manifest_b = json.loads(a.pop("backup.json")), json.loads(b.pop("backup.json"))
    assert a == b  # every SKILL.md and blob, byte for byte
    mode = "dual-sign-required"
    assert manifest_a.pop("workspace") == {
        "slug": source.slug,
        "name": source.name,
        "permission_mode": mode,
    }
    assert manifest_b.pop("workspace") == {
        "slug": "restored",
        "name": target.name,
        "permission_mode": mode,
    }
    assert manifest_a == manifest_b
    # Byte-identical apart from the workspace's identity, which sits in one place.
    source.slug, source.name = target.slug, target.name
    assert backup_write(workspace_backup(workspace=source)) == second


def _as_version_4(manifest: dict[str, Any]) -> None:
    """What a backup written before permission modes and scan overrides holds."""
    manifest["format_version"] = 4
    del manifest["workspace"]["permission_mode"]
    for skill in manifest["skills"]:
        for rev in skill["revisions"]:
            del rev["scan_override"]


def _without_overrides_and_mode(original: dict[str, Any]) -> None:
    for skill in original.values():
        skill["permission_mode"] = "mutating-with-confirm"  # the new team's default
        for rev in skill["revisions"]:
            rev["scan_override"] = None


def test_a_version_4_backup_restores_with_the_default_mode_and_no_override(
    env: Env, restore_into: Callable[[bytes, Workspace], RestoreResult]
) -> None:
    source = _history(env)
    original = _rows(source)
    data = backup_write(workspace_backup(workspace=source))
    target = make_team(env.owner, slug="restored", members=_people(env))
    restore_into(_tampered(data, _edit_manifest(_as_version_4)), target)
    _without_overrides_and_mode(original)
    assert _rows(target) == original
    blocked = SkillRevision.objects.get(skill__workspace=target, skill__slug="overridden")
    with pytest.raises(errors.ScanBlocked):
        scan_gate(revision=blocked, what="approved")


def test_an_override_in_a_backup_counts_only_when_an_owner_restores(
    env: Env, django_capture_on_commit_callbacks: Any
) -> None:
    """Only owners let a blocked revision through (contract §21): an admin's restore leaves the
    backup's overrides out, and says so, rather than let a forged backup pass the gate."""
    data = backup_write(workspace_backup(workspace=_history(env)))
    target = make_team(env.owner, slug="restored", members={env.admin: "admin"})
    with django_capture_on_commit_callbacks(execute=True):
        result = workspace_restore(
            actor=actor_for(env.admin), workspace=target, backup=backup_read(data)
        )
    blocked = SkillRevision.objects.get(skill__workspace=target, skill__slug="overridden")
    assert RevisionScan.objects.get(revision=blocked).override_at is None
    assert any("overridden r1" in note and "owner" in note for note in result["notes"])
    with pytest.raises(errors.ScanBlocked):
        scan_gate(revision=blocked, what="approved")
    assert Workspace.objects.get(pk=target.pk).permission_mode == "dual-sign-required"


def _as_version_1(manifest: dict[str, Any]) -> None:
    _as_version_4(manifest)
    manifest["format_version"] = 1
    for skill in manifest["skills"]:
        del skill["labels"]
        for rev in skill["revisions"]:
            del rev["outcomes"]
            for key in ("comments", "approvals", "answers_revision_number"):
                del rev["review"][key]


def test_a_version_1_backup_still_restores_without_conversations(
    env: Env, restore_into: Callable[[bytes, Workspace], RestoreResult]
) -> None:
    source = _history(env)
    original = _rows(source)
    data = backup_write(workspace_backup(workspace=source))
    assert json.loads(_entries(data)["backup.json"])["format_version"] == 5
    target = make_team(env.owner, slug="restored", members=_people(env))
    restore_into(_tampered(data, _edit_manifest(_as_version_1)), target)
    restored = _rows(target)
    _without_overrides_and_mode(original)
    for skill in original.values():
        skill["labels"] = []
        for rev in skill["revisions"]:
            rev.update(comments=[], approvals=[], answers=None, outcomes=[])
    assert restored == original


def _tampered(data: bytes, edit: Callable[[dict[str, bytes]], None]) -> bytes:
    entries = _entries(data)
    edit(entries)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def _edit_manifest(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, bytes]], None]:
    def edit(entries: dict[str, bytes]) -> None:
        manifest = json.loads(entries["backup.json"])
        change(manifest)
        entries["backup.json"] = json.dumps(manifest).encode()

    return edit


def _set_hash(manifest: dict[str, Any]) -> None:
    manifest["skills"][0]["revisions"][0]["canonical_hash"] = "0" * 64


def _set_blob_sha(manifest: dict[str, Any]) -> None:
    for skill in manifest["skills"]:
        for rev in skill["revisions"]:
            for comp in rev["components"]:
                comp["sha256"] = "f" * 64


def _two_published(manifest: dict[str, Any]) -> None:
    runbook = next(skill for skill in manifest["skills"] if skill["slug"] == "runbook")
    for rev in runbook["revisions"]:
        rev["state"] = "published"


def _label_on(number: int) -> Callable[[dict[str, Any]], None]:
    def change(manifest: dict[str, Any]) -> None:
        runbook = next(skill for skill in manifest["skills"] if skill["slug"] == "runbook")
        runbook["labels"][0]["revision_number"] = number

    return change


def _body_changed(entries: dict[str, bytes]) -> None:
    name = next(n for n in entries if n.endswith("/SKILL.md"))
    entries[name] += b"\nInjected.\n"


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        (lambda data: data[: len(data) // 2], "UNSUPPORTED_FORMAT"),  # truncated
        (lambda data: _tampered(data, _edit_manifest(_set_hash)), "VALIDATION_ERROR"),
        (lambda data: _tampered(data, _edit_manifest(_set_blob_sha)), "VALIDATION_ERROR"),
        (lambda data: _tampered(data, _body_changed), "VALIDATION_ERROR"),
        (lambda data: _tampered(data, _edit_manifest(_two_published)), "VALIDATION_ERROR"),
        (
            lambda data: _tampered(data, lambda e: e.__setitem__("extra.txt", b"x")),
            "VALIDATION_ERROR",
        ),
        (
            lambda data: _tampered(
                data, _edit_manifest(lambda m: m.__setitem__("format_version", 99))
            ),
            "UNSUPPORTED_FORMAT",
        ),
        (lambda data: _tampered(data, _edit_manifest(_label_on(9))), "VALIDATION_ERROR"),
    ],
    ids=[
        "truncated",
        "canonical-hash",
        "blob-sha",
        "body",
        "two-published",
        "unlisted-file",
        "version",
        "label-missing-revision",
    ],
)
def test_a_damaged_backup_is_refused_and_nothing_is_stored(
    env: Env,
    restore_into: Callable[[bytes, Workspace], RestoreResult],
    damage: Callable[[bytes], bytes],
    code: str,
) -> None:
    _history(env)
    data = backup_write(workspace_backup(workspace=env.team))
    target = make_team(env.owner, slug="restored")
    with pytest.raises(errors.XmemoError) as refused:
        restore_into(damage(data), target)
    assert refused.value.code == code, refused.value.message
    assert not Skill.objects.filter(workspace=target).exists()
    assert not SkillRevision.objects.filter(workspace=target).exists()


def test_an_older_backup_with_a_label_on_a_rejected_revision_restores_without_it(
    env: Env, restore_into: Callable[[bytes, Workspace], RestoreResult]
) -> None:
    """Issue 37 #6: a backup taken while a label survived its revision's rejection could not be
    restored (INVALID_TRANSITION). The label is left out, and the result says so."""
    _history(env)
    data = backup_write(workspace_backup(workspace=env.team))
    target = make_team(env.owner, slug="restored")
    result = restore_into(_tampered(data, _edit_manifest(_label_on(3))), target)
    runbook = Skill.objects.get(workspace=target, slug="runbook")
    assert list(runbook.labels.values_list("name", flat=True)) == ["production"]
    (note,) = result["notes"]
    assert "runbook" in note
    assert "'previous'" in note
    assert "rejected" in note
    entry = AuditEntry.objects.get(workspace=target, action="workspace.restore")
    assert entry.data["notes"] == [note]


def test_restore_needs_an_empty_team_and_an_admin(
    env: Env, restore_into: Callable[[bytes, Workspace], RestoreResult]
) -> None:
    _history(env)
    data = backup_write(workspace_backup(workspace=env.team))
    before = SkillRevision.objects.count()
    with pytest.raises(errors.Conflict, match="already holds skills"):
        restore_into(data, env.team)
    with pytest.raises(errors.ValidationFailed, match="team workspace"):
        restore_into(data, env.personal)
    target = make_team(env.owner, slug="restored", members={env.member: "member"})
    with pytest.raises(errors.PermissionDenied):
        workspace_restore(actor=actor_for(env.member), workspace=target, backup=backup_read(data))
    assert SkillRevision.objects.count() == before


def test_restore_workspace_command(env: Env, tmp_path: Any) -> None:
    source = _history(env)
    backup = tmp_path / "team-backup.zip"
    backup.write_bytes(backup_write(workspace_backup(workspace=source)))
    target = make_team(env.owner, slug="restored", members=_people(env))
    with pytest.raises(CommandError, match=r"Nothing was restored: .*already holds skills"):
        call_command("restore_workspace", str(backup), "--workspace", env.team.slug)
    out = io.StringIO()
    call_command(
        "restore_workspace",
        str(backup),
        "--workspace",
        "restored",
        "--as-user",
        env.admin.username,
        stdout=out,
    )
    assert out.getvalue().strip() == (
        f"Restored 5 skill(s) with 8 revision(s) from '{env.team.slug}' into 'restored'."
    )
    expected = _rows(source)
    expected["overridden"]["revisions"][0]["scan_override"] = None  # an admin restored it
    assert _rows(target) == expected
    entry = AuditEntry.objects.get(workspace=target, action="workspace.restore")
    assert entry.actor == env.admin
