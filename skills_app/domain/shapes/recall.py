"""The three levels of recall (docs/contract.md §5): Level 0 descriptors, Level 1 a skill's
instructions, Level 2 one resource, each in its ``{"kind", "data"}`` answer."""

from typing import Annotated, Literal, NotRequired, TypedDict

from skills_app.domain.shapes.fields import (
    RESOLVED_BY,
    ComponentType,
    Doc,
    Encoding,
    JSONObject,
    Minimum,
    OneOf,
    RevisionState,
    WorkspaceKind,
)


class SearchResult(TypedDict):
    """One Level 0 descriptor (docs/contract.md §5), best match first."""

    skill_id: str
    slug: str
    workspace: str
    scope: WorkspaceKind
    name: str
    description: str
    published_revision_number: int | None
    score: float
    approx_tokens: Annotated[
        int,
        Minimum(0),
        Doc(
            "Estimated tokens of the Level 1 answer this skill serves by default "
            "(an estimate, not a tokenizer's count: docs/contract.md §5)."
        ),
    ]


class RecallSearchData(TypedDict):
    results: list[SearchResult]


class RecallSearch(TypedDict):
    kind: Literal["search"]
    data: RecallSearchData


class Resource(TypedDict):
    """One entry of a revision's component manifest."""

    logical_path: str
    type: ComponentType
    content_hash: str
    size: int
    media_type: str


class RenderWarning(TypedDict):
    """The shape of the lint's warnings (docs/contract.md §17): code, field, message."""

    code: Annotated[str, Doc("UNKNOWN_CONTEXT_VARIABLE")]
    field: str
    message: str


class RootData(TypedDict):
    """Level 1: a skill's instructions at the resolved revision."""

    skill_id: str
    slug: str
    workspace: str
    name: str
    description: str
    revision_id: str
    revision_number: int
    state: RevisionState
    canonical_hash: str
    frontmatter: JSONObject
    instruction_body: str
    resolved_by: Annotated[str, OneOf(RESOLVED_BY)]
    resources: list[Resource]
    approx_tokens: Annotated[
        int,
        Minimum(0),
        Doc(
            "Estimated tokens of this answer: name, description, frontmatter, body and "
            "resource manifest (and rendered_body when given), about 4 ASCII characters or 1 "
            "other character per token; an estimate, not a tokenizer's count "
            "(docs/contract.md §5)."
        ),
    ]
    labels: Annotated[
        list[str], Doc("The names of the labels pointing at this revision (docs/contract.md §18).")
    ]
    rendered_body: NotRequired[
        Annotated[str, Doc("Only when 'arguments' was given (docs/contract.md §11).")]
    ]
    render_warnings: NotRequired[
        Annotated[
            list[RenderWarning],
            Doc(
                "Only when 'arguments' was given and the render left something out, such as "
                "an unknown ${XMEMO_…} context variable (docs/contract.md §11)."
            ),
        ]
    ]
    scan: Annotated[
        JSONObject,
        Doc(
            "The revision's scan (docs/contract.md §21): verdict (pending, clean, warn, "
            "block), findings, scanner_version."
        ),
    ]


class RecallRoot(TypedDict):
    kind: Literal["root"]
    data: RootData


class ResourceData(Resource):
    """Level 2: one component of a revision, its bytes as text or base64."""

    skill_id: str
    revision_id: str
    encoding: Encoding
    content: str


class RecallResource(TypedDict):
    kind: Literal["resource"]
    data: ResourceData


RecallAnswer = RecallSearch | RecallRoot | RecallResource
