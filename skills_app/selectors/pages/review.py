"""The review page's view model (``console/views/review.py`` renders it as it is).

One pass through the gate (``access.revision_in``) finds the revision and its skill; every read
after it takes them, and the buttons and the second sign-off come from the domain's rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from skills_app.access import Actor, revision_in
from skills_app.domain import lifecycle, shapes
from skills_app.domain.bundle import ComponentEntry
from skills_app.domain.markdown import render_markdown
from skills_app.domain.permission_modes import second_sign_off_missing
from skills_app.domain.skillmd import frontmatter_yaml
from skills_app.models import RevisionComment, SkillRevision, Workspace
from skills_app.selectors.diff import bundle_diff
from skills_app.selectors.evals import ReviewEvidence, review_evidence
from skills_app.selectors.pages.skill import SkillHeader, header_fields, header_of
from skills_app.selectors.reviews import revision_approvals, revision_sign_offs, revision_thread
from skills_app.selectors.revisions import revision_bundle
from skills_app.selectors.scans import ScanAnswer, scan_answer, stored_scan
from skills_app.selectors.skills import revision_manifest, revision_pair_diff, revisions_of


@dataclass(frozen=True)
class ReviewPage(SkillHeader):
    """A revision under review: its diff against what it would replace (``baseline``), its
    content, the conversation, the evidence and scan, and the buttons."""

    revision: SkillRevision
    baseline: SkillRevision | None
    diff: shapes.RevisionPairDiff
    body_html: str
    frontmatter_text: str
    components: list[ComponentEntry]
    actions: list[str]
    comments: list[tuple[RevisionComment, str]]
    body_lines: list[tuple[int, str]]
    approvals: list[shapes.Approval]
    evidence: ReviewEvidence
    scan: ScanAnswer
    sign_offs: list[str]
    needs_second_sign_off: bool
    is_owner: bool


def review_page(*, actor: Actor, workspace: Workspace, revision_id: str) -> ReviewPage:
    """The review page of ``revision_id`` in ``workspace``. What is live is what a proposal
    would replace; with nothing published, its parent."""
    scope, revision = revision_in(actor, workspace, revision_id)
    skill = scope.skill
    baseline = skill.published_revision or revision.parent
    if baseline is not None and baseline.pk == revision.pk:
        baseline = revision.parent
    revisions = revisions_of(skill)
    sign_offs = revision_sign_offs(revision)
    user_pk = actor.user.pk if actor.user else None
    return ReviewPage(
        **header_fields(header_of(scope, revisions)),
        revision=revision,
        baseline=baseline,
        diff=(
            revision_pair_diff(baseline, revision)
            if baseline is not None
            else bundle_diff(None, revision_bundle(revision), number=revision.revision_number)
        ),
        body_html=render_markdown(revision.instruction_body),
        frontmatter_text=frontmatter_yaml(revision.frontmatter),
        components=revision_manifest(revision),
        actions=lifecycle.actions_available(
            state=revision.state,
            workspace_kind=workspace.kind,
            role=scope.role,
            is_author=revision.author_id == user_pk,
            require_distinct_reviewer=workspace.reviewer_must_differ,
        ),
        comments=[
            (comment, render_markdown(comment.body))
            for comment in revision_thread(revision=revision)
        ],
        body_lines=list(enumerate(revision.instruction_body.splitlines(), start=1)),
        approvals=revision_approvals(revision),
        evidence=review_evidence(revision=revision, baseline=baseline),
        scan=scan_answer(stored_scan(revision)),
        sign_offs=sign_offs,
        needs_second_sign_off=second_sign_off_missing(
            workspace_kind=workspace.kind,
            mode=workspace.permission_mode,
            script_class=(revision.frontmatter or {}).get("class"),
            sign_offs=len(sign_offs),
        ),
        is_owner=scope.role == lifecycle.OWNER,
    )
