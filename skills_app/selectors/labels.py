"""Reads of labels (docs/contract.md §18)."""

from __future__ import annotations

from django.db.models import OuterRef, Subquery

from skills_app.access import Actor, require_scope, skill_for
from skills_app.domain import shapes
from skills_app.models import Skill, SkillLabel


def label_as_dict(label: SkillLabel) -> shapes.Label:
    return {
        "name": label.name,
        "revision_id": label.revision.revision_id,
        "revision_number": label.revision.revision_number,
        "moved_by": label.moved_by.get_username() if label.moved_by is not None else None,
        "moved_at": label.moved_at.isoformat(),
    }


def skill_labels(skill: Skill) -> list[SkillLabel]:
    """A skill the caller may read: its labels by name."""
    return list(
        SkillLabel.objects.filter(skill=skill)
        .select_related("revision", "moved_by")
        .order_by("name")
    )


def label_list(*, actor: Actor, skill_id: str) -> list[shapes.Label]:
    """``GET /v1/skills/{skill_id}/labels``: every label of the skill, by name."""
    require_scope(actor, "skills:read")
    return [label_as_dict(label) for label in skill_labels(skill_for(actor, skill_id))]


def labels_by_revision(skill: Skill) -> dict[int, list[str]]:
    """Revision pk → the names of the labels pointing at it (the console's timeline)."""
    names: dict[int, list[str]] = {}
    for revision_pk, name in (
        SkillLabel.objects.filter(skill=skill).order_by("name").values_list("revision_id", "name")
    ):
        names.setdefault(revision_pk, []).append(name)
    return names


def label_target(name: str) -> Subquery:
    """For a query of skills: the pk of the revision each one's label ``name`` points at, null
    where the skill has no label so named — what Level 1 serves by ``label`` (the sync listing
    annotates its skills with it, so a label costs no extra query)."""
    return Subquery(
        SkillLabel.objects.filter(skill=OuterRef("pk"), name=name).values("revision_id")[:1]
    )
