"""A single uploaded SKILL.md → a bundle (docs/contract.md §8 "SKILL.md upload")."""

from __future__ import annotations

from skills_app.domain.bundle import SkillBundle
from skills_app.domain.limits import slug_from_name, validate_bundle
from skills_app.domain.skillmd import parse_skill_md, skill_md_slug_hint, split_frontmatter
from skills_app.formats.files import located


def skill_md_bundle_read(data: bytes, *, filename: str = "SKILL.md") -> SkillBundle:
    """Parse and validate one SKILL.md; errors name ``filename``.

    Unknown frontmatter keys are kept verbatim. The bundle has no components (an empty tuple,
    not None: an imported SKILL.md is the whole skill, nothing is carried over) and a slug
    suggested by its ``name`` key, which the caller may override; a display name
    (``metadata.xmemo-display-name``, or the older top-level key) is the name (docs/contract.md §9).
    """
    parsed = parse_skill_md(data, path=filename)
    with located(filename):
        name, description, rest = split_frontmatter(parsed.frontmatter)
        bundle = SkillBundle(
            name=name,
            description=description,
            instruction_body=parsed.body,
            frontmatter=rest,
            components=(),
            slug=slug_from_name(skill_md_slug_hint(parsed.frontmatter) or name),
            source="import-skill-md",
        )
        validate_bundle(bundle)
    return bundle
