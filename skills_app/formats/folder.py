"""One skill folder (from a ZIP, a repository archive or a directory tree) → one bundle.

The manifest decides: ``capsule.json`` (a Source Capsule, read losslessly), else ``SKILL.md``
(frontmatter and body, every other file a component typed by its folder), else ``skill.json``
(a subprocess skill). A SKILL.md skill's slug is the folder's name when valid, else its name;
a skill.json skill's is its name with ``_`` → ``-`` (docs/contract.md §8); a capsule's is the
recorded one."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from skills_app.domain.bundle import SkillBundle
from skills_app.domain.limits import validate_bundle, validate_slug
from skills_app.errors import ValidationFailed
from skills_app.formats.capsule import capsule_bundle_read
from skills_app.formats.files import (
    CAPSULE_JSON,
    SKILL_JSON,
    SKILL_MD,
    FileRole,
    RawRead,
    check_component_count,
    component_build,
    located,
    read_checked,
)
from skills_app.formats.skilljson import skill_json_bundle_read
from skills_app.formats.skillmd import skill_md_bundle_read

SKILL_MANIFESTS = (SKILL_MD, SKILL_JSON)
ZIP_SOURCE = "import-zip"


def _folder_slug(folder_name: str) -> str | None:
    try:
        return validate_slug(folder_name)
    except ValidationFailed:
        return None


def _components_read(names: Collection[str], read: RawRead, *, where: str) -> dict[str, bytes]:
    check_component_count(len(names), where=where)
    return {
        name: read_checked(read, name, where=where, role=FileRole.COMPONENT)
        for name in sorted(names)
    }


def folder_bundle_read(
    names: Collection[str],
    read: RawRead,
    *,
    where: str,
    folder_name: str,
    source: str | None,
    source_ref: str,
) -> SkillBundle:
    """Build and validate the bundle of a folder whose files are ``names``.

    ``names`` are relative to the folder, safety-checked and without junk; ``read`` opens
    them; ``where`` prefixes paths in errors (``""`` or ``"pack/skill/"``). ``source`` None
    keeps the manifest reader's own (``import-skill-md`` / ``import-skill-json``).
    """
    files = set(names)
    if CAPSULE_JSON in files:
        return capsule_bundle_read(
            files, read, where=where, source=source or "import-skill-md", source_ref=source_ref
        )
    if SKILL_MD in files:
        bundle = skill_md_bundle_read(
            read_checked(read, SKILL_MD, where=where, role=FileRole.SKILL_MD),
            filename=f"{where}{SKILL_MD}",
        )
        contents = _components_read(files - {SKILL_MD}, read, where=where)
        bundle = replace(
            bundle,
            components=tuple(component_build(path, data) for path, data in contents.items()),
            slug=_folder_slug(folder_name) or bundle.slug,
        )
    elif SKILL_JSON in files:
        # What the folder holds names the source, not the ZIP it travelled in; a URL import
        # keeps import-url, whose source_ref is the attribution.
        if source == ZIP_SOURCE:
            source = None
        manifest = read_checked(read, SKILL_JSON, where=where, role=FileRole.MANIFEST)
        bundle = skill_json_bundle_read(
            manifest,
            files=_components_read(files - {SKILL_JSON}, read, where=where),
            filename=f"{where}{SKILL_JSON}",
        )
    else:
        raise ValidationFailed(
            f"{where or 'The skill folder'} has no {SKILL_MD} (or {SKILL_JSON}).",
            details={"path": f"{where}{SKILL_MD}"},
        )
    bundle = replace(bundle, source=source or bundle.source, source_ref=source_ref)
    with located(where):
        validate_bundle(bundle)
    return bundle
