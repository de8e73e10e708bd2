"""The neutral value every writer of skill content produces and ``services.skills`` consumes.

Console forms, the REST/MCP save, and every import reader turn their input into a
``SkillBundle``; one save service validates and stores it. Nothing here touches the database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skills_app.domain.paths import nfc_path

COMPONENT_TYPES = ("reference", "example", "template", "document", "artifact", "script")


@dataclass(frozen=True)
class ComponentData:
    logical_path: str
    type: str
    content: bytes
    media_type: str = "application/octet-stream"

    def __post_init__(self) -> None:
        # Paths are stored NFC (docs/contract.md §3), whichever door the component came through.
        object.__setattr__(self, "logical_path", nfc_path(self.logical_path))


@dataclass(frozen=True)
class ComponentEntry:
    """One line of a stored revision's component manifest: what it holds, not the bytes."""

    logical_path: str
    type: str
    content_hash: str
    size: int
    media_type: str


@dataclass(frozen=True)
class SkillBundle:
    """One revision's content. ``components`` None means "carry the base revision's over"."""

    name: str
    description: str
    instruction_body: str
    frontmatter: dict[str, Any] = field(default_factory=dict)
    components: tuple[ComponentData, ...] | None = None
    slug: str | None = None
    source: str = "api"
    source_ref: str = ""


@dataclass(frozen=True)
class SavePayload:
    """A save payload whose every field has the right type (the rules are checked later)."""

    workspace: str | None
    slug: str
    bundle: SkillBundle
    intent: str
    base_revision_id: str | None
    message: str
    acknowledge_secrets: bool = False
