"""What a shape's field may say besides its type, for the schemas built from it: a description
(``Doc``), a format (``DateTime``, ``Date``), a least value (``Minimum``), the values a text may
take (``OneOf``); and ``JSONObject``, the one free-form object (docs/contract.md names which
fields are free-form: frontmatter, scan, audit data, error details). Metadata only: a shape is a
plain dict at run time."""

from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypedDict, TypeVar

from skills_app.domain.bundle import COMPONENT_TYPES
from skills_app.domain.lifecycle import ROLES, SCOPES, STATES
from skills_app.domain.permission_modes import PERMISSION_MODES


@dataclass(frozen=True)
class Doc:
    text: str


@dataclass(frozen=True)
class Format:
    name: str


@dataclass(frozen=True)
class Minimum:
    value: int


@dataclass(frozen=True)
class OneOf:
    values: tuple[str, ...]


# A JSON object whose members the contract leaves open (frontmatter is the author's YAML).
JSONObject = dict[str, Any]

DateTime = Annotated[str, Format("date-time")]
Date = Annotated[str, Format("date")]

# The values of the models' choices (tests/domain/test_shapes.py holds them equal).
WORKSPACE_KINDS = ("personal", "team")
SKILL_STATUSES = ("active", "archived")
REVISION_SOURCES = (
    "console",
    "api",
    "mcp",
    "import-skill-md",
    "import-zip",
    "import-url",
    "import-skill-json",
    "restore",
)
RESOLVED_BY = ("published", "latest_fallback", "pinned", "label")
ENCODINGS = ("utf-8", "base64")

RevisionState = Annotated[str, OneOf(STATES)]
WorkspaceKind = Annotated[str, OneOf(WORKSPACE_KINDS)]
SkillStatus = Annotated[str, OneOf(SKILL_STATUSES)]
RevisionSource = Annotated[str, OneOf(REVISION_SOURCES)]
ComponentType = Annotated[str, OneOf(COMPONENT_TYPES)]
Encoding = Annotated[str, OneOf(ENCODINGS)]
Role = Annotated[str, OneOf(ROLES)]
Scope = Annotated[str, OneOf(SCOPES)]
PermissionMode = Annotated[str, OneOf(PERMISSION_MODES)]

Row = TypeVar("Row")


class PageOf(TypedDict, Generic[Row]):
    """One page of a list (``selectors/pagination.py``): its rows, and the cursor of the next."""

    results: list[Row]
    next_cursor: str | None
