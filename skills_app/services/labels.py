"""Moving and removing labels (docs/contract.md §18).

Each function is one transaction under the skill's row lock (as every lifecycle change of the
skill), so a label never lands on a revision that a concurrent reject is sending back. Who may:
the ``skills:review`` scope and, in a team, an owner or admin (in a personal workspace the user
is its owner). Every move and removal is audited as ``skills.label.move`` /
``skills.label.delete``, which ``services.events`` announces as the webhook event
``label.moved`` (``revision_id`` null for a removal).
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from skills_app import errors
from skills_app.access import Actor, require_role, require_scope
from skills_app.domain.labels import (
    LABEL_ROLES,
    LABEL_SCOPE,
    check_label_target,
    validate_label_name,
)
from skills_app.models import Skill, SkillLabel, SkillRevision, Workspace
from skills_app.services.audit import audit_record


def _require_label_rights(actor: Actor, workspace: Workspace) -> None:
    require_scope(actor, LABEL_SCOPE)
    require_role(actor, workspace, LABEL_ROLES)


def _checked(actor: Actor, skill: Skill, name: str) -> Skill:
    _require_label_rights(actor, skill.workspace)
    validate_label_name(name)
    return Skill.objects.select_for_update().select_related("workspace").get(pk=skill.pk)


def label_move(*, actor: Actor, skill: Skill, name: str, revision_id: str) -> SkillLabel:
    """Point label ``name`` of ``skill`` at ``revision_id`` (creating the label if new)."""
    with transaction.atomic():
        locked = _checked(actor, skill, name)
        revision = SkillRevision.objects.filter(skill=locked, revision_id=revision_id).first()
        if revision is None:
            raise errors.NotFound(
                f"Revision '{revision_id}' is not a revision of '{locked.slug}'.",
                details={"revision_id": revision_id, "skill_id": locked.skill_id},
            )
        check_label_target(state=revision.state, reviewed=revision.reviewed_at is not None)
        label = SkillLabel.objects.filter(skill=locked, name=name).first()
        previous = label.revision.revision_id if label is not None else None
        if label is None:
            label = SkillLabel(skill=locked, workspace=locked.workspace, name=name)
        label.revision = revision
        label.moved_by = actor.person
        label.moved_at = timezone.now()
        label.save()
        audit_record(
            actor=actor,
            workspace=locked.workspace,
            action="skills.label.move",
            target_type="skill",
            target_id=locked.skill_id,
            data={
                "slug": locked.slug,
                "label": name,
                "revision_id": revision.revision_id,
                "revision_number": revision.revision_number,
                "from_revision_id": previous,
            },
        )
        return label


def label_delete(*, actor: Actor, skill: Skill, name: str) -> None:
    """Remove label ``name`` from ``skill``; 404 LABEL_NOT_FOUND when it has none so named."""
    with transaction.atomic():
        locked = _checked(actor, skill, name)
        label = SkillLabel.objects.select_related("revision").filter(skill=locked, name=name)
        found = label.first()
        if found is None:
            raise errors.LabelNotFound(
                f"'{locked.slug}' has no label '{name}'.",
                details={"skill_id": locked.skill_id, "label": name},
            )
        _remove(actor=actor, skill=locked, label=found)


def labels_drop_rejected(*, actor: Actor, revision: SkillRevision) -> None:
    """Remove every label on ``revision``, which a reviewer has just rejected: a label never
    points at a rejected revision (docs/contract.md §18). The caller holds the skill's row lock
    (the lifecycle transaction); each removal is audited and sent like ``label_delete``'s."""
    labels = SkillLabel.objects.filter(revision=revision).select_related("revision")
    for label in labels.order_by("name"):
        _remove(actor=actor, skill=revision.skill, label=label)


def _remove(*, actor: Actor, skill: Skill, label: SkillLabel) -> None:
    label.delete()
    audit_record(
        actor=actor,
        workspace=skill.workspace,
        action="skills.label.delete",
        target_type="skill",
        target_id=skill.skill_id,
        data={
            "slug": skill.slug,
            "label": label.name,
            "revision_id": None,
            "revision_number": None,
            "from_revision_id": label.revision.revision_id,
        },
    )
