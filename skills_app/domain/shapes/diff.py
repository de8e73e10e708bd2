"""The diff of two revisions (docs/contract.md §10): ``domain.diff`` builds it, REST answers it
as ``SkillDiff`` and the console's review, diff and conflict screens read it."""

from typing import Annotated, TypedDict

from skills_app.domain.shapes.fields import ComponentType, Doc, OneOf
from skills_app.domain.shapes.skills import RevisionRef

DIFF_OPS = ("equal", "insert", "delete")


class DiffOp(TypedDict):
    op: Annotated[str, OneOf(DIFF_OPS)]
    text: str


class DiffListing(TypedDict):
    path: str
    type: ComponentType
    size: int
    sha256: str


class DiffChange(TypedDict):
    path: str
    type: ComponentType
    old_type: ComponentType
    old_sha256: str
    new_sha256: str
    old_size: int
    new_size: int
    diff: list[DiffOp] | None


class DiffComponents(TypedDict):
    added: list[DiffListing]
    removed: list[DiffListing]
    changed: list[DiffChange]
    unchanged: list[str]


class DiffStats(TypedDict):
    insertions: int
    deletions: int


class _OfSkill(TypedDict):
    skill_id: str


# "from" is a keyword: the functional form. A member added here reaches SkillDiff too.
RevisionPairDiff = TypedDict(
    "RevisionPairDiff",
    {
        "from": RevisionRef,
        "to": RevisionRef,
        "name": list[DiffOp] | None,
        "description": list[DiffOp] | None,
        "frontmatter": list[DiffOp] | None,
        "instruction_body": list[DiffOp],
        "components": DiffComponents,
        "stats": DiffStats,
        "truncated": Annotated[
            bool, Doc("The time budget ran out: some texts got a valid but coarser diff.")
        ],
    },
)


class SkillDiff(_OfSkill, RevisionPairDiff):
    """The GET /v1/skills/{skill_id}/diff answer: the skill's id, then the pair's diff."""
