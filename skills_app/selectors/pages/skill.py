"""The skill page's view model (``console/views/skills.py`` renders it as it is).

One pass through the gate (``access.skill_in``) finds the skill; every read after it takes the
skill or its revisions, and the buttons come from the domain's rules.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from skills_app import errors
from skills_app.access import Actor, SkillScope, revision_in, skill_in
from skills_app.domain import lifecycle
from skills_app.domain.bundle import ComponentEntry
from skills_app.domain.charts import Chart, usage_chart
from skills_app.domain.labels import is_rejected, labels_movable
from skills_app.domain.markdown import render_markdown
from skills_app.domain.shapes import SkillUsage
from skills_app.domain.skillmd import frontmatter_yaml
from skills_app.models import Skill, SkillRevision, Workspace
from skills_app.selectors.commands import command_name_in
from skills_app.selectors.evals import ReviewEvidence, review_evidence
from skills_app.selectors.labels import labels_by_revision
from skills_app.selectors.recall.content import ComponentContent
from skills_app.selectors.scans import ScanAnswer, scan_answer, stored_scan
from skills_app.selectors.skills import revision_component, revision_manifest, revisions_of
from skills_app.selectors.usage import usage_of


@dataclass(frozen=True)
class SkillHeader:
    """What every page of one skill shows: its header and the review banner."""

    skill: Skill
    pending: list[SkillRevision]
    command_name: str | None
    skill_scan: ScanAnswer | None


@dataclass(frozen=True)
class TimelineItem:
    revision: SkillRevision
    actions: tuple[str, ...]
    reviewable: bool
    previous: SkillRevision | None
    labels: list[str]
    labelable: bool


@dataclass(frozen=True)
class SkillPage(SkillHeader):
    """The skill page: the revision shown, the timeline, evidence, usage and the skill's
    status buttons."""

    shown: SkillRevision | None
    body_html: str
    frontmatter_text: str
    components: list[ComponentEntry]
    timeline: list[TimelineItem]
    usage: SkillUsage
    usage_chart: Chart
    evidence: ReviewEvidence | None
    label_names: list[str]
    skill_actions: list[str]


def header_of(scope: SkillScope, revisions: list[SkillRevision]) -> SkillHeader:
    """The header of a skill's pages, from the gate's answer and ``revisions_of``'s list."""
    skill = scope.skill
    return SkillHeader(
        skill=skill,
        pending=[r for r in reversed(revisions) if r.state == SkillRevision.State.PROPOSED],
        command_name=command_name_in(skill, scope.workspaces),
        skill_scan=scan_answer(stored_scan(skill.latest_revision))
        if skill.latest_revision
        else None,
    )


def skill_header(*, actor: Actor, workspace: Workspace, skill_id: str) -> SkillHeader:
    """The header alone, for the pages of one skill that show nothing else of it (the delete
    page, the editor)."""
    scope = skill_in(actor, workspace, skill_id)
    return header_of(scope, revisions_of(scope.skill))


@dataclass(frozen=True)
class ComponentPage(SkillHeader):
    """One component of a revision: its metadata, and its text unless it is binary."""

    shown: SkillRevision
    component: ComponentContent
    text: str | None


def component_page(
    *, actor: Actor, workspace: Workspace, revision_id: str, path: str
) -> ComponentPage:
    scope, revision = revision_in(actor, workspace, revision_id)
    component = revision_component(actor=actor, revision=revision, logical_path=path)
    return ComponentPage(
        **header_fields(header_of(scope, revisions_of(scope.skill))),
        shown=revision,
        component=component,
        text=component.content if component.encoding == "utf-8" else None,
    )


def header_fields(header: SkillHeader) -> dict[str, Any]:
    """The header's fields, to build a page that extends it."""
    return {f.name: getattr(header, f.name) for f in fields(SkillHeader)}


def _timeline(
    scope: SkillScope,
    revisions: list[SkillRevision],
    labels: dict[int, list[str]],
    user_pk: int | None,
) -> list[TimelineItem]:
    workspace = scope.skill.workspace
    may_label = labels_movable(role=scope.role, scopes=scope.scopes)
    items = []
    for index, revision in enumerate(revisions):
        buttons = lifecycle.revision_buttons(
            state=revision.state,
            workspace_kind=workspace.kind,
            role=scope.role,
            is_author=revision.author_id == user_pk,
            is_latest=index == 0,
            require_distinct_reviewer=workspace.reviewer_must_differ,
        )
        reviewed = revision.reviewed_at is not None
        items.append(
            TimelineItem(
                revision=revision,
                actions=buttons.actions,
                reviewable=buttons.reviewable,
                previous=revisions[index + 1] if index + 1 < len(revisions) else None,
                labels=labels.get(revision.pk, []),
                labelable=may_label and not is_rejected(state=revision.state, reviewed=reviewed),
            )
        )
    return items


def _shown(skill: Skill, revisions: list[SkillRevision], wanted: str) -> SkillRevision | None:
    """The revision asked for (``?revision=``), else the current one, else the newest."""
    if wanted:
        shown = next((r for r in revisions if r.revision_id == wanted), None)
        if shown is None:
            raise errors.NotFound(f"Revision '{wanted}' is not a revision of this skill.")
        return shown
    current = next((r for r in revisions if r.pk == skill.current_revision_id), None)
    return current or (revisions[0] if revisions else None)


def skill_page(*, actor: Actor, workspace: Workspace, skill_id: str, wanted: str) -> SkillPage:
    """The skill page of ``skill_id`` in ``workspace``, showing revision ``wanted`` (or the
    current one). The reads come first, the domain's rules after them."""
    scope = skill_in(actor, workspace, skill_id)
    skill = scope.skill
    revisions = revisions_of(skill)
    shown = _shown(skill, revisions, wanted)
    labels = labels_by_revision(skill)
    usage = usage_of(skill)
    header = header_of(scope, revisions)
    components = revision_manifest(shown) if shown else []
    evidence = review_evidence(revision=shown, baseline=None) if shown else None
    timeline = _timeline(scope, revisions, labels, actor.user.pk if actor.user else None)
    return SkillPage(
        **header_fields(header),
        shown=shown,
        body_html=render_markdown(shown.instruction_body) if shown else "",
        frontmatter_text=frontmatter_yaml(shown.frontmatter) if shown else "",
        components=components,
        timeline=timeline,
        usage=usage,
        usage_chart=usage_chart(usage["days"]),
        evidence=evidence,
        label_names=sorted({name for names in labels.values() for name in names}),
        skill_actions=lifecycle.skill_actions_available(status=skill.status, role=scope.role),
    )
