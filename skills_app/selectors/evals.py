"""Trigger checks and outcomes, the read side (docs/contract.md §22).

What a workspace serves its agents (``served_set``: a digest of every served skill's served
revision and whether Level 0 holds its vector, so two checks against equal digests ran on the
same inputs), the trigger sets of revisions, and the stored answers."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import cast

from django.db.models import Count, F, Q

from skills_app.access import Actor, require_scope, revision_for
from skills_app.domain.evals import (
    OUTCOMES,
    TRIGGERS_PATH,
    Figures,
    Triggers,
    success_rate,
    triggers_parse,
)
from skills_app.domain.shapes import Outcomes, RevisionEvals
from skills_app.encoder import embedding
from skills_app.errors import ValidationFailed
from skills_app.infra import db
from skills_app.models import (
    RevisionEmbedding,
    RevisionEvaluation,
    RevisionOutcome,
    Skill,
    SkillComponent,
    SkillRevision,
    Workspace,
)
from skills_app.selectors.search import served_gate

_SKILL = Skill._meta.db_table
_EMBEDDING = RevisionEmbedding._meta.db_table


@dataclass(frozen=True)
class ServedSet:
    digest: str
    skills: int


def served_set(*, workspace: Workspace) -> ServedSet:
    """The skills Level 0 shows this workspace's agents, as one digest."""
    where, params = served_gate(workspace=workspace).sql("s")
    rows = db.fetch_all(
        f"SELECT s.id, s.current_revision_id, e.id IS NOT NULL FROM {_SKILL} s"  # noqa: S608 - names only
        f" LEFT JOIN {_EMBEDDING} e ON e.revision_id = s.current_revision_id AND e.model = %s"
        f" WHERE {where} ORDER BY s.id",
        [embedding.MODEL, *params],
    )
    text = ";".join(f"{pk}:{rev}:{int(bool(vec))}" for pk, rev, vec in rows)
    return ServedSet(hashlib.sha256(text.encode()).hexdigest(), len(rows))


def revision_triggers(*, revision_pk: int) -> Triggers | None:
    """The revision's trigger sets; None without a (readable) ``evals/triggers.json``."""
    raw = (
        SkillComponent.objects.filter(revision_id=revision_pk, logical_path=TRIGGERS_PATH)
        .values_list("blob__data", flat=True)
        .first()
    )
    if raw is None:
        return None
    try:
        return triggers_parse(bytes(raw))
    except ValidationFailed:  # stored before the file was checked at save (a restore)
        return None


def served_trigger_tasks(*, workspace: Workspace, skill_pk: int) -> list[tuple[str, str]]:
    """(slug, task) of every other served skill's should-trigger tasks."""
    where, params = served_gate(workspace=workspace).sql("s")
    rows = db.fetch_all(
        f"SELECT s.slug, s.current_revision_id FROM {_SKILL} s WHERE {where} AND s.id <> %s"  # noqa: S608 - names only
        " ORDER BY s.slug",
        [*params, skill_pk],
    )
    holding = set(
        SkillComponent.objects.filter(
            revision_id__in=[rev for _, rev in rows], logical_path=TRIGGERS_PATH
        ).values_list("revision_id", flat=True)
    )
    tasks = []
    for slug, rev in rows:
        triggers = revision_triggers(revision_pk=rev) if rev in holding else None
        tasks += [(slug, task) for task in (triggers.should_trigger if triggers else ())]
    return tasks


def live_revisions(*, workspace: Workspace) -> list[SkillRevision]:
    """Revisions whose checks someone looks at: each active skill's latest and served revision
    and every proposal, when they carry a trigger set."""
    return list(
        SkillRevision.objects.filter(
            Q(skill__latest_revision_id=F("id"))
            | Q(skill__current_revision_id=F("id"))
            | Q(state=SkillRevision.State.PROPOSED),
            skill__workspace=workspace,
            skill__status=Skill.Status.ACTIVE,
            components__logical_path=TRIGGERS_PATH,
        )
        .select_related("skill", "skill__workspace", "evaluation")
        .order_by("pk")
    )


def evaluation_answer(*, revision: SkillRevision) -> RevisionEvals:
    """GET /v1/revisions/{id}/evals of a revision already read through ``access``."""
    try:
        stored: RevisionEvaluation | None = revision.evaluation
    except RevisionEvaluation.DoesNotExist:
        stored = None
    if stored is None or stored.state != RevisionEvaluation.State.DONE:
        has = SkillComponent.objects.filter(revision=revision, logical_path=TRIGGERS_PATH).exists()
        return {"state": "pending" if has else "none"}
    figures = cast(Figures, stored.figures)
    current = served_set(workspace=revision.skill.workspace)
    return {
        "state": "done",
        **figures,
        "served_set": {
            "digest": stored.served_set,
            "skills": stored.served_skills,
            "computed_at": stored.computed_at.isoformat() if stored.computed_at else None,
            "current": current.digest == stored.served_set,
        },
    }


def revision_evals(*, actor: Actor, revision_id: str) -> RevisionEvals:
    require_scope(actor, "skills:read")
    revision = revision_for(actor, revision_id)
    return evaluation_answer(revision=revision)


def outcome_figures(counts: dict[str, int]) -> Outcomes:
    """Counts of each outcome and the success rate (docs/evals.md)."""
    success, partial, failure = (int(counts.get(kind, 0)) for kind in OUTCOMES)
    return {
        "success": success,
        "partial": partial,
        "failure": failure,
        "rate": success_rate(counts),
    }


def revision_outcomes(*, revision_pk: int) -> Outcomes:
    """Every outcome reported for one revision."""
    rows = (
        RevisionOutcome.objects.filter(revision_id=revision_pk)
        .values_list("outcome")
        .annotate(n=Count("id"))
        .order_by()
    )
    return outcome_figures({outcome: n for outcome, n in rows})


@dataclass(frozen=True)
class ReviewEvidence:
    """What the review and skill pages show (docs/contract.md §22): a revision's checks
    beside those of the revision it replaces, and how the served revision has been doing."""

    checks: RevisionEvals
    was: RevisionEvals | None
    baseline: SkillRevision | None
    served: SkillRevision | None
    outcomes: Outcomes | None
    notes: list[RevisionOutcome]


def review_evidence(*, revision: SkillRevision, baseline: SkillRevision | None) -> ReviewEvidence:
    """``revision``'s evidence against ``baseline`` (None: the skill page's, nothing beside)."""
    skill = revision.skill
    served = skill.published_revision or skill.current_revision
    return ReviewEvidence(
        checks=evaluation_answer(revision=revision),
        was=evaluation_answer(revision=baseline) if baseline is not None else None,
        baseline=baseline,
        served=served,
        outcomes=revision_outcomes(revision_pk=served.pk) if served is not None else None,
        notes=(
            list(
                RevisionOutcome.objects.filter(revision=served)
                .exclude(note="")
                .order_by("-reported_at")[:5]
            )
            if served is not None
            else []
        ),
    )
