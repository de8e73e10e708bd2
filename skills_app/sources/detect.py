"""Which reader an uploaded file needs: a ZIP of skills, a skill.json or a SKILL.md."""

from __future__ import annotations

from .. import errors
from ..domain.bundle import SkillBundle
from . import archive, skilljson, skillmd


def upload_bundles_read(data: bytes, filename: str) -> list[SkillBundle]:
    """The skills in an uploaded file, recognised by its content first and its name second."""
    name = (filename or "").rsplit("/", 1)[-1]
    if data[:4] == b"PK\x03\x04" or name.lower().endswith(".zip"):
        return archive.zip_bundles_read(data, source="import-zip", source_ref=name)
    if name.lower().endswith(".json"):
        return [skilljson.skill_json_bundle_read(data, filename=name)]
    if name.lower().endswith(".md") or data.lstrip()[:3] == b"---":
        return [skillmd.skill_md_bundle_read(data, filename=name or "SKILL.md")]
    raise errors.UnsupportedFormat(
        f"'{name or 'the upload'}' is not a SKILL.md, a ZIP or a skill.json.",
        details={"filename": name},
    )
