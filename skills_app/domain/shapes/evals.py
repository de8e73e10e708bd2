"""A revision's trigger checks (docs/contract.md §22): GET /v1/revisions/{revision_id}/evals,
the lint answer's ``triggers`` and the review and skill pages read them."""

from typing import Annotated, NotRequired, TypedDict

from skills_app.domain.evals import Collisions, TaskResult
from skills_app.domain.shapes.fields import DateTime, Doc, OneOf

EVAL_STATES = ("none", "pending", "done")


class EvalServedSet(TypedDict):
    digest: Annotated[str, Doc("A digest of every served skill's served revision.")]
    skills: int
    computed_at: NotRequired[DateTime | None]
    current: Annotated[bool, Doc("The skills served now are those the checks ran against.")]


class RevisionEvals(TypedDict):
    """``state`` alone while there is no trigger set (none) or the checks wait (pending); once
    done, ``domain.evals.Figures`` and the set of skills they ran against."""

    state: Annotated[str, OneOf(EVAL_STATES)]
    recall_at_1: NotRequired[float | None]
    recall_at_3: NotRequired[float | None]
    false_trigger_rate: NotRequired[float | None]
    should_trigger: NotRequired[int]
    hits_at_1: NotRequired[int]
    hits_at_3: NotRequired[int]
    should_not_trigger: NotRequired[int]
    false_triggers: NotRequired[int]
    tasks: NotRequired[list[TaskResult]]
    collisions: NotRequired[Collisions]
    served_set: NotRequired[EvalServedSet]
