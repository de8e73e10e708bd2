"""Skills and their revisions: the save and lint answers, the bridge's sync and bundle, lists
and details (docs/contract.md §6, §7, §17)."""

from typing import Annotated, TypedDict

from skills_app.domain.evals import OUTCOMES
from skills_app.domain.shapes.fields import (
    ComponentType,
    DateTime,
    Doc,
    Encoding,
    JSONObject,
    OneOf,
    RevisionSource,
    RevisionState,
    SkillStatus,
    WorkspaceKind,
)
from skills_app.domain.shapes.recall import Resource

_RESTORED = Doc("Restored name of someone not a member of the team (text).")


class LintProblem(TypedDict):
    code: str
    field: str
    message: str


class Save(TypedDict):
    """The POST /v1/skills/save answer."""

    skill_id: str
    revision_id: str
    revision_number: int
    state: RevisionState
    canonical_hash: str
    created: bool
    warnings: Annotated[list[LintProblem], Doc("Agent Skills advice (docs/contract.md §17).")]


class ApproxTokens(TypedDict):
    level0: int
    level1: int
    components: dict[str, int]


class Lint(TypedDict):
    errors: Annotated[list[LintProblem], Doc("What a save would refuse; empty when none.")]
    warnings: list[LintProblem]
    approx_tokens: ApproxTokens
    scan: Annotated[
        JSONObject, Doc("The scan of what a save would store (§21): verdict and findings.")
    ]
    triggers: Annotated[
        JSONObject | None,
        Doc(
            "The folder's trigger checks (docs/evals.md); null without a trigger set or "
            "with errors."
        ),
    ]


class SyncFile(TypedDict):
    path: str
    sha256: str
    size: int


class SyncSkill(TypedDict):
    slug: str
    workspace: str
    skill_id: str
    revision_id: str
    revision_number: int
    canonical_hash: str
    files: Annotated[list[SyncFile], Doc("SKILL.md first, then the components by path.")]


class Sync(TypedDict):
    skills: list[SyncSkill]


class BundleFile(TypedDict):
    path: str
    type: ComponentType | None
    encoding: Encoding
    content: str
    sha256: str


class Bundle(TypedDict):
    revision_id: str
    canonical_hash: str
    name: str
    description: str
    frontmatter: JSONObject
    instruction_body: str
    files: Annotated[list[BundleFile], Doc("SKILL.md (type null) first, then components.")]
    scan: Annotated[
        JSONObject,
        Doc("The revision's scan: verdict, findings, scanner_version."),
    ]


class RevisionRef(TypedDict):
    revision_id: str
    revision_number: int


class LatestRef(RevisionRef):
    state: RevisionState


class Skill(TypedDict):
    """A skill with its latest and published revisions."""

    skill_id: str
    slug: str
    workspace: str
    scope: WorkspaceKind
    status: SkillStatus
    name: str
    description: str
    model_invocable: bool
    revision_count: int
    published_revision: RevisionRef | None
    latest_revision: LatestRef | None
    awaiting_review: Annotated[int, Doc("Proposed revisions waiting for review.")]
    created_at: DateTime
    updated_at: DateTime


class Revision(TypedDict):
    """A revision as lists show it: no body, frontmatter or manifest."""

    revision_id: str
    skill_id: str
    slug: str
    workspace: str
    revision_number: int
    state: RevisionState
    name: str
    description: str
    canonical_hash: str
    parent_revision_id: str | None
    author: str | None
    imported_author: Annotated[str | None, _RESTORED]
    message: str
    source: RevisionSource
    source_ref: str
    created_at: DateTime
    state_changed_at: DateTime | None
    reviewed_by: str | None
    imported_reviewer: Annotated[str | None, _RESTORED]
    reviewed_at: DateTime | None
    review_comment: str


class Approval(TypedDict):
    user: str | None
    imported_user: Annotated[str | None, _RESTORED]
    created_at: DateTime


class RevisionDetail(Revision):
    """A revision with its body, frontmatter, approvals and component manifest."""

    answers_revision_id: Annotated[
        str | None, Doc("The revision whose review (changes requested) this answers.")
    ]
    approvals: list[Approval]
    frontmatter: JSONObject
    instruction_body: str
    components: list[Resource]


class Comment(TypedDict):
    comment_id: str
    revision_id: str
    author: str | None
    imported_author: Annotated[str | None, _RESTORED]
    body: str
    body_html: str
    line: int | None
    action: str | None
    created_at: DateTime


class OutcomeReport(TypedDict):
    """The POST /v1/revisions/{revision_id}/outcomes answer."""

    revision_id: str
    outcome: Annotated[str, OneOf(OUTCOMES)]
    accepted: bool
