"""A restore never puts words in another person's mouth (docs/contract.md §9): a forged backup
naming a user of another tenant as author, reviewer, approver and commenter maps none of those
roles to that account, keeps the name as imported text, and answers exactly as it does for a
name that exists nowhere — no answer tells which accounts exist."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest

from skills_app.formats.backup import backup_read, backup_write
from skills_app.gateway.shapes import revision_as_dict
from skills_app.models import AuditEntry, RevisionApproval, RevisionComment, SkillRevision
from skills_app.selectors.reviews import comment_as_dict, revision_approvals
from skills_app.services.backup import workspace_backup, workspace_restore
from tests.factories import Env, actor_for, make_team, make_user, publish


def _forged(env: Env, name: str) -> bytes:
    """A real backup whose every person field names ``name``: "LGTM from <name>"."""
    publish(env.member, env.team, slug="runbook", instruction_body="# Runbook\n")
    data = backup_write(workspace_backup(workspace=env.team))
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        entries = {n: archive.read(n) for n in archive.namelist()}
    manifest = json.loads(entries["backup.json"])
    rev = manifest["skills"][0]["revisions"][0]
    rev["author"] = name
    rev["review"]["reviewed_by"] = name
    rev["review"]["comment"] = f"LGTM from {name}"
    stamp = rev["created_at"]
    rev["review"]["comments"] = [
        {"author": name, "body": "LGTM", "line": None, "action": "", "created_at": stamp}
    ]
    rev["review"]["approvals"] = [{"user": name, "created_at": stamp}]
    entries["backup.json"] = json.dumps(manifest).encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for entry, content in entries.items():
            archive.writestr(entry, content)
    return buffer.getvalue()


def _restored_people(revision: SkillRevision) -> dict[str, Any]:
    """Who the restored revision names, as every reader of it answers (REST/MCP/console)."""
    detail: Any = revision_as_dict(revision)
    comment = RevisionComment.objects.get(revision=revision)
    approval = RevisionApproval.objects.get(revision=revision)
    return {
        "rows": (
            revision.author_id,
            revision.reviewed_by_id,
            comment.author_id,
            approval.user_id,
        ),
        "revision": {
            k: detail[k] for k in ("author", "imported_author", "reviewed_by", "imported_reviewer")
        },
        "comment": {k: dict(comment_as_dict(comment))[k] for k in ("author", "imported_author")},
        "approvals": revision_approvals(revision),
    }


def _shape(value: Any) -> Any:
    """The answer with ids and times blanked: what must not differ between the two names."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    if isinstance(value, str) and value.startswith(("skill_", "rev_")):
        return "<id>"
    return value


@pytest.mark.parametrize("who", ["other-tenant", "nobody"])
def test_a_forged_backup_names_a_non_member_only_as_imported_text(env: Env, who: str) -> None:
    bob = make_user("bob")  # a real account of another tenant, not in the target team
    name = "bob" if who == "other-tenant" else "no-such-person"
    data = _forged(env, name)
    target = make_team(env.owner, slug="forged")

    result = workspace_restore(
        actor=actor_for(env.owner), workspace=target, backup=backup_read(data)
    )

    assert _shape(result) == {
        "skills": [{"skill_id": "<id>", "slug": "runbook"}],
        "revision_count": 1,
        "from_workspace": env.team.slug,
        "notes": [],
    }
    revision = SkillRevision.objects.get(workspace=target)
    people = _restored_people(revision)
    assert people["rows"] == (None, None, None, None)  # no account speaks, bob's least of all
    assert people["revision"] == {
        "author": None,
        "imported_author": name,
        "reviewed_by": None,
        "imported_reviewer": name,
    }
    assert people["comment"] == {"author": None, "imported_author": name}
    assert [(a["user"], a["imported_user"]) for a in people["approvals"]] == [(None, name)]
    assert revision.review_comment == f"LGTM from {name}"
    entry = AuditEntry.objects.get(workspace=target, action="workspace.restore")
    assert entry.data == {"from": env.team.slug, "skills": 1, "revisions": 1, "notes": []}
    assert not RevisionApproval.objects.filter(user=bob).exists()


def test_names_of_target_team_members_map_to_their_accounts(env: Env) -> None:
    data = _forged(env, env.admin.username)
    target = make_team(env.owner, slug="forged", members={env.admin: "admin"})
    workspace_restore(actor=actor_for(env.owner), workspace=target, backup=backup_read(data))
    revision = SkillRevision.objects.get(workspace=target)
    people = _restored_people(revision)
    assert people["rows"] == (env.admin.pk,) * 4
    assert people["revision"] == {
        "author": env.admin.username,
        "imported_author": None,
        "reviewed_by": env.admin.username,
        "imported_reviewer": None,
    }
    assert people["comment"] == {"author": env.admin.username, "imported_author": None}
