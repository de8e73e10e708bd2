"""Trigger checks (docs/contract.md §22): each task of a revision's ``evals/triggers.json``, and
every other served skill's should-trigger task, run through Level 0 (``search_gated``) over the
skills its workspace serves, with the revision standing in for its skill.

Standing in, without a second ranking: inside a savepoint rolled back after, the skill's row
takes the revision's words, and its meaning is the revision's descriptor vector (``StandIn``);
query vectors come first, so the row is held only while words are ranked. ``evals_wanted``
hands the workspace to ``evals_refresh`` after commit, which checks every live revision whose
figures are missing or stale (docs/evals.md)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from django.db import connection, transaction
from django.utils import timezone

from skills_app.domain.bundle import SkillBundle
from skills_app.domain.descriptor import descriptor_text
from skills_app.domain.evals import TRIGGERS_PATH, figures, triggers_parse
from skills_app.domain.search_text import search_columns
from skills_app.encoder import embedding
from skills_app.errors import ValidationFailed
from skills_app.infra.queue import EVALS_REFRESH, hand_over
from skills_app.models import RevisionEvaluation, Skill, SkillRevision, Workspace
from skills_app.selectors.evals import (
    live_revisions,
    revision_triggers,
    served_set,
    served_trigger_tasks,
)
from skills_app.selectors.search import StandIn, search_gated, served_gate
from skills_app.selectors.search.semantic import query_vector
from skills_app.services.embeddings import embeddings_available
from skills_app.services.events import event_emit

if TYPE_CHECKING:
    import numpy as np

    from skills_app.domain.evals import Triggers

logger = logging.getLogger(__name__)
# Level 0's default answer: a rank beyond it is "not answered".
RANKS = 10
_MARK = "_xmemo_evals_workspace"


def descriptor_vector(*, name: str, description: str, body: str) -> np.ndarray | None:
    """The vector Level 0 would store for this text (``services.embeddings``), None without
    semantic search."""
    if not embeddings_available():
        return None
    encoder = embedding.encoder()
    if encoder is None:
        return None
    text = descriptor_text(name=name, description=description, body=body)
    return embedding.vector_from_bytes(embedding.vector_bytes(encoder.encode([text])[0]))


def rank_standing_in(
    *,
    workspace: Workspace,
    skill: Skill | None,
    slug: str,
    name: str,
    description: str,
    body: str,
    model_invocable: bool,
    tasks: list[str],
) -> dict[str, list[str]]:
    """Each task → the slugs Level 0 answers for it in ``workspace`` with this text standing
    in for ``skill`` (None: a skill not saved yet, linted). Nothing it changes is kept."""
    vector = descriptor_vector(name=name, description=description, body=body)
    if embeddings_available() and embedding.query_encoder() is not None:
        for task in tasks:  # before the row is held: the encoder is the slow part
            query_vector(task)
    ranked: dict[str, list[str]] = {}
    with transaction.atomic():
        columns = {
            **search_columns(name=name, slug=slug, description=description, body=body),
            "model_invocable": model_invocable,
        }
        if skill is None:
            stand = Skill.objects.create(workspace=workspace, slug=slug, **columns)
        else:
            Skill.objects.filter(pk=skill.pk).update(**columns)
            stand = skill
        gate = served_gate(workspace=workspace, stand_in=stand.pk)
        stand_in = StandIn(skill_pk=stand.pk, vector=vector)
        for task in dict.fromkeys(tasks):
            answer = search_gated(gate=gate, text=task, limit=RANKS, stand_in=stand_in)
            ranked[task] = [hit["slug"] for hit in answer]
        transaction.set_rollback(True)
    return ranked


def _model_invocable(frontmatter: dict[str, object] | None) -> bool:
    invoke = (frontmatter or {}).get("invoke")
    return not (isinstance(invoke, dict) and invoke.get("model") is False)


def evaluation_figures(
    *, revision: SkillRevision, triggers: Triggers
) -> tuple[dict[str, object], int]:
    """The figures of ``revision``'s checks now, and how many skills were served."""
    skill = revision.skill
    workspace = skill.workspace
    others = served_trigger_tasks(workspace=workspace, skill_pk=skill.pk)
    tasks = [*triggers.should_trigger, *triggers.should_not_trigger, *(t for _, t in others)]
    ranked = rank_standing_in(
        workspace=workspace,
        skill=skill,
        slug=skill.slug,
        name=revision.name,
        description=revision.description,
        body=revision.instruction_body,
        model_invocable=_model_invocable(revision.frontmatter),
        tasks=tasks,
    )
    result = figures(slug=skill.slug, triggers=triggers, ranked=ranked, others=others)
    return dict(result), len(others)


def lint_triggers(
    *, workspace: Workspace, slug: str, bundle: SkillBundle
) -> dict[str, object] | None:
    """Lint's trigger checks (docs/contract.md §17, §22): the unsaved ``bundle`` standing in
    for ``slug`` in ``workspace`` (a new skill when there is none); None without a valid
    trigger set (components carried over: the latest revision's)."""
    skill = Skill.objects.filter(workspace=workspace, slug=slug).first()
    if bundle.components is not None:
        raw = next((c.content for c in bundle.components if c.logical_path == TRIGGERS_PATH), None)
        try:
            triggers = None if raw is None else triggers_parse(raw)
        except ValidationFailed:  # the lint's errors say why
            triggers = None
    elif skill is not None and skill.latest_revision_id is not None:
        triggers = revision_triggers(revision_pk=skill.latest_revision_id)
    else:
        triggers = None
    if triggers is None:
        return None
    others = served_trigger_tasks(workspace=workspace, skill_pk=skill.pk if skill else 0)
    ranked = rank_standing_in(
        workspace=workspace,
        skill=skill,
        slug=slug,
        name=bundle.name,
        description=bundle.description,
        body=bundle.instruction_body,
        model_invocable=_model_invocable(bundle.frontmatter),
        tasks=[*triggers.should_trigger, *triggers.should_not_trigger, *(t for _, t in others)],
    )
    served = served_set(workspace=workspace)
    return {
        **figures(slug=slug, triggers=triggers, ranked=ranked, others=others),
        "served_set": {"digest": served.digest, "skills": served.skills, "current": True},
    }


def evaluation_compute(*, revision: SkillRevision) -> RevisionEvaluation | None:
    """Compute and store ``revision``'s checks (None: it has no trigger set)."""
    triggers = revision_triggers(revision_pk=revision.pk)
    if triggers is None:
        return None
    workspace = revision.skill.workspace
    before = served_set(workspace=workspace)
    result, _ = evaluation_figures(revision=revision, triggers=triggers)
    with transaction.atomic():
        previous = (
            RevisionEvaluation.objects.filter(revision=revision, state="done")
            .values_list("figures", flat=True)
            .first()
        )
        evaluation, _ = RevisionEvaluation.objects.update_or_create(
            revision=revision,
            defaults={
                "state": RevisionEvaluation.State.DONE,
                "figures": result,
                "served_set": before.digest,
                "served_skills": before.skills,
                "computed_at": timezone.now(),
            },
        )
        if previous != result:
            event_emit(
                workspace=workspace,
                event_type="revision.evaluated",
                data=lambda: _event_data(revision, result),
            )
    return evaluation


def _event_data(revision: SkillRevision, result: dict[str, Any]) -> dict[str, Any]:
    """``revision.evaluated``'s data: the revision, as every revision event names it, and the
    figures without the per-task detail (``GET /v1/revisions/{id}/evals`` has it)."""
    return {
        "skill_id": revision.skill.skill_id,
        "slug": revision.skill.slug,
        "revision_id": revision.revision_id,
        "revision_number": revision.revision_number,
        "state": revision.state,
        **{key: result[key] for key in ("recall_at_1", "recall_at_3", "false_trigger_rate")},
        "collisions": result["collisions"],
    }


def evals_refresh(*, workspace_pk: int) -> int:
    """Check again every live revision of the workspace whose figures are missing or were
    computed against another served set; answers how many were computed."""
    workspace = Workspace.objects.filter(pk=workspace_pk).first()
    if workspace is None:
        return 0
    done = 0
    for revision in live_revisions(workspace=workspace):
        current = served_set(workspace=workspace)
        stored = getattr(revision, "evaluation", None)
        if stored is not None and stored.served_set == current.digest:
            continue
        evaluation_compute(revision=revision)
        done += 1
    return done


def evals_wanted(skill: Skill) -> None:
    """Inside the transaction that moved ``skill``'s pointers: once it commits, the
    workspace's checks are brought up to date off the request path (once per transaction)."""
    workspace_pk = skill.workspace_id
    pending = connection.run_on_commit if connection.in_atomic_block else []
    if any(getattr(entry[1], _MARK, None) == workspace_pk for entry in pending):
        return

    def refresh() -> None:  # what the broker cannot take, the periodic catch-up finds
        hand_over(EVALS_REFRESH, [[workspace_pk]])

    setattr(refresh, _MARK, workspace_pk)
    transaction.on_commit(refresh, robust=True)


def evals_catch_up() -> int:
    """The periodic catch-up: every workspace with a live revision out of date."""
    done = 0
    for workspace_pk in (
        SkillRevision.objects.filter(components__logical_path="evals/triggers.json")
        .values_list("skill__workspace_id", flat=True)
        .distinct()
    ):
        done += evals_refresh(workspace_pk=workspace_pk)
    return done
