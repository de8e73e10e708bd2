"""Which reader an uploaded file needs: a ZIP of skills, a skill.json or a SKILL.md."""

from __future__ import annotations

from skills_app import errors
from skills_app.domain.bundle import SkillBundle
from skills_app.formats import archive, skilljson, skillmd


def _upload_kind(data: bytes, name: str) -> str:
    """Which reader the upload needs: ``zip``, ``json`` or ``md``; anything else is refused."""
    if data[:4] == b"PK\x03\x04" or name.lower().endswith(".zip"):
        return "zip"
    if name.lower().endswith(".json"):
        return "json"
    if name.lower().endswith(".md") or data.lstrip()[:3] == b"---":
        return "md"
    raise errors.UnsupportedFormat(
        f"'{name or 'the upload'}' is not a SKILL.md, a ZIP or a skill.json.",
        details={"filename": name},
    )


def _name(filename: str) -> str:
    return (filename or "").rsplit("/", 1)[-1]


def upload_format_check(data: bytes, filename: str) -> None:
    """Refuse, before anything is stored, an upload no reader takes: an unknown kind, or a ZIP
    whose central directory cannot be read (truncated, not a ZIP, over the entry bounds)."""
    if _upload_kind(data, _name(filename)) == "zip":
        with archive.zip_files_open(data):
            pass


def upload_bundles_read(data: bytes, filename: str) -> list[SkillBundle]:
    """The skills in an uploaded file, recognised by its content first and its name second."""
    name = _name(filename)
    kind = _upload_kind(data, name)
    if kind == "zip":
        return archive.zip_bundles_read(data, source="import-zip", source_ref=name)
    if kind == "json":
        return [skilljson.skill_json_bundle_read(data, filename=name)]
    return [skillmd.skill_md_bundle_read(data, filename=name or "SKILL.md")]
