"""A stored revision as the value object the rest of the code works on (``SkillBundle``)."""

from __future__ import annotations

from skills_app.domain.bundle import ComponentData, SkillBundle
from skills_app.models import Skill, SkillComponent, SkillRevision


def revision_bundle(revision: SkillRevision, *, with_components: bool = True) -> SkillBundle:
    """``revision``'s content: its text fields and (unless ``with_components`` is False, which
    leaves ``components`` None) its components in path order, bytes loaded in one query."""
    components = None
    if with_components:
        rows = (
            SkillComponent.objects.filter(revision=revision)
            .order_by("logical_path")
            .values_list("logical_path", "type", "blob__data", "media_type")
        )
        components = tuple(
            ComponentData(logical_path=path, type=kind, content=bytes(data), media_type=media)
            for path, kind, data, media in rows
        )
    return SkillBundle(
        name=revision.name,
        description=revision.description,
        instruction_body=revision.instruction_body,
        frontmatter=revision.frontmatter,
        components=components,
    )


def revision_component_rows(*, revision: SkillRevision) -> list[SkillComponent]:
    """``revision``'s components in path order with their bytes (the editor's rows)."""
    return list(
        SkillComponent.objects.filter(revision=revision)
        .select_related("blob")
        .order_by("logical_path")
    )


def skill_stored_component(*, skill: Skill, content_hash: str) -> SkillComponent | None:
    """A component, with its bytes, of one of ``skill``'s revisions holding ``content_hash``
    (never another skill's)."""
    return (
        SkillComponent.objects.filter(revision__skill=skill, content_hash=content_hash)
        .select_related("blob")
        .first()
    )
