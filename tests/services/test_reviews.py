"""The review conversation (docs/contract.md §16) on the real database: comments, request changes,
the author's answer, and N distinct approvals — concurrency-safe, audited, nothing half-stored."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from skills_app import errors
from skills_app.models import AuditEntry, RevisionApproval, RevisionComment, SkillRevision
from skills_app.services.reviews import revision_comment_add
from skills_app.services.skills import revision_transition
from skills_app.services.workspace_settings import workspace_settings_update
from tests.factories import Env, actor_for, make_user, publish, save
from tests.support import require_service


def _proposed(env: Env, author_role: str = "member", body: str = "# Deploy\n\nStep one.\n"):
    author = env.role_user(author_role)
    return save(author, env.team, slug="deploy", intent="publish", instruction_body=body).revision


def _traces(rev: SkillRevision) -> tuple[int, int, int]:
    return (
        RevisionComment.objects.filter(revision=rev).count(),
        RevisionApproval.objects.filter(revision=rev).count(),
        AuditEntry.objects.filter(target_id=rev.revision_id).count(),
    )


def test_request_changes_needs_a_comment_and_sends_the_revision_back(env: Env) -> None:
    rev = _proposed(env)
    before = _traces(rev)
    for comment in ("", "   \n"):
        with pytest.raises(errors.ValidationFailed, match="needs a comment") as refused:
            revision_transition(
                actor=actor_for(env.admin), revision=rev, action="request_changes", comment=comment
            )
        assert refused.value.details["field"] == "comment"
    with pytest.raises(errors.PermissionDenied):
        revision_transition(
            actor=actor_for(env.member2), revision=rev, action="request_changes", comment="No."
        )
    rev.refresh_from_db()
    assert rev.state == "proposed"
    assert _traces(rev) == before  # nothing half-stored, nothing audited

    moved = revision_transition(
        actor=actor_for(env.admin), revision=rev, action="request_changes", comment="Add a step."
    )
    assert (moved.state, moved.reviewed_by, moved.review_comment) == (
        "draft",
        env.admin,
        "Add a step.",
    )
    thread = list(RevisionComment.objects.filter(revision=rev))
    assert [(c.author, c.body, c.action) for c in thread] == [
        (env.admin, "Add a step.", "request_changes")
    ]
    assert AuditEntry.objects.filter(
        action="skills.revision.request_changes", target_id=rev.revision_id, actor=env.admin
    ).exists()

    answer = save(env.member, env.team, slug="deploy", instruction_body="# Deploy\n\nTwo.\n")
    assert answer.revision.answers_revision == rev
    # A save on top of a revision nobody sent back answers nothing.
    assert (
        save(env.member, env.team, slug="deploy", instruction_body="x").revision.answers_revision
        is None
    )


def test_reject_keeps_working_and_lands_in_the_thread(env: Env) -> None:
    rev = _proposed(env)
    moved = revision_transition(
        actor=actor_for(env.owner), revision=rev, action="reject", comment="Not for us."
    )
    assert moved.state == "draft"
    assert list(RevisionComment.objects.filter(revision=rev).values_list("action", flat=True)) == [
        "reject"
    ]


def test_comments_by_members_with_a_line_and_refusals_store_nothing(env: Env) -> None:
    rev = _proposed(env, body="line one\nline two\nline three\n")
    comment = revision_comment_add(
        actor=actor_for(env.member2), revision=rev, body="What about **rollback**?", line=2
    )
    assert (comment.line, comment.author, comment.workspace_id) == (2, env.member2, env.team.pk)
    assert (
        AuditEntry.objects.filter(
            action="skills.revision.comment", target_id=rev.revision_id
        ).count()
        == 1
    )
    before = _traces(rev)
    bad = (("", None), ("  ", 1), ("ok", 0), ("ok", 4), ("x" * 10_001, None), ("a\x00b", None))
    for body, line in bad:
        with pytest.raises(errors.ValidationFailed):
            revision_comment_add(actor=actor_for(env.member), revision=rev, body=body, line=line)
    with pytest.raises(errors.NotFound):
        revision_comment_add(actor=actor_for(env.outsider), revision=rev, body="hi")
    assert _traces(rev) == before


def test_n_distinct_approvals_publish_and_the_author_never_counts(env: Env) -> None:
    live = publish(env.member, env.team, slug="deploy").revision
    admin2 = make_user()
    env.team.memberships.create(user=admin2, role="admin")
    workspace_settings_update(actor=actor_for(env.owner), workspace=env.team, required_approvals=2)
    assert AuditEntry.objects.filter(
        action="workspace.settings.change", data__required_approvals__to=2
    ).exists()
    rev = _proposed(env, author_role="admin", body="# Deploy v2\n")

    with pytest.raises(errors.PermissionDenied, match="other than the author"):
        revision_transition(actor=actor_for(env.admin), revision=rev, action="approve")
    first = revision_transition(actor=actor_for(admin2), revision=rev, action="approve")
    assert first.state == "proposed"
    with pytest.raises(errors.Conflict, match="already approved"):
        revision_transition(actor=actor_for(admin2), revision=rev, action="approve")
    assert [a.user for a in RevisionApproval.objects.filter(revision=rev)] == [admin2]

    second = revision_transition(actor=actor_for(env.owner), revision=rev, action="approve")
    assert (second.state, second.reviewed_by) == ("published", env.owner)
    live.refresh_from_db()
    assert live.state == "deprecated"
    approvals = list(RevisionApproval.objects.filter(revision=rev).values_list("user", flat=True))
    assert approvals == [admin2.pk, env.owner.pk]
    audits = AuditEntry.objects.filter(action="skills.revision.approve", target_id=rev.revision_id)
    assert sorted(a.data["approvals"] for a in audits) == [1, 2]


def test_required_approvals_is_validated_and_a_members_change_refused(env: Env) -> None:
    owner = actor_for(env.owner)
    for value in (0, 11, -1, True):
        with pytest.raises(errors.ValidationFailed):
            workspace_settings_update(actor=owner, workspace=env.team, required_approvals=value)
    with pytest.raises(errors.ValidationFailed):
        workspace_settings_update(actor=owner, workspace=env.personal, required_approvals=2)
    with pytest.raises(errors.PermissionDenied):
        workspace_settings_update(
            actor=actor_for(env.member), workspace=env.team, required_approvals=3
        )
    env.team.refresh_from_db()
    assert env.team.required_approvals == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_approvals_publish_exactly_once(env: Env) -> None:
    require_service("PostgreSQL", connection.vendor == "postgresql")
    reviewers = [make_user() for _ in range(6)]
    for user in reviewers:
        env.team.memberships.create(user=user, role="admin")
    env.team.__class__.objects.filter(pk=env.team.pk).update(required_approvals=3)
    rev = _proposed(env)
    barrier = threading.Barrier(len(reviewers))
    outcomes: list[str] = []

    def approve(user: object) -> None:
        try:
            barrier.wait()
            moved = revision_transition(actor=actor_for(user), revision=rev, action="approve")  # type: ignore[arg-type]
            outcomes.append(moved.state)
        except errors.XmemoError as exc:
            outcomes.append(exc.code)
        finally:
            connection.close()

    threads = [threading.Thread(target=approve, args=(u,)) for u in reviewers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # The first two approvals are recorded, the third publishes, later ones find it published
    # and are recorded as sign-offs (docs/contract.md §21).
    assert sorted(outcomes) == sorted(["proposed", "proposed"] + ["published"] * 4)
    assert SkillRevision.objects.filter(skill=rev.skill, state="published").count() == 1
    assert RevisionApproval.objects.filter(revision=rev).count() == 6
