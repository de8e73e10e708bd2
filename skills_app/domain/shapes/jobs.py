"""A background job as REST answers it (GET /v1/jobs/{job_id}, docs/contract.md §7): imports,
exports, executions and restores all answer this one shape."""

from typing import Annotated, Any, TypedDict

from skills_app.domain.shapes.errors import ErrorBody
from skills_app.domain.shapes.fields import DateTime, Doc, OneOf

# The values of Job.Kind and Job.State (tests/api/test_shapes.py holds them equal).
JOB_KINDS = ("import", "export", "execute", "restore")
JOB_STATES = ("queued", "running", "succeeded", "failed")


class Progress(TypedDict):
    done: int
    total: int


class Job(TypedDict):
    job_id: str
    kind: Annotated[str, OneOf(JOB_KINDS)]
    state: Annotated[str, OneOf(JOB_STATES)]
    workspace: str
    progress: Progress
    result: Annotated[
        Any | None, Doc("What the job made, by kind (docs/contract.md §7); null before.")
    ]
    error: ErrorBody | None
    log: str
    created_at: DateTime
    started_at: DateTime | None
    finished_at: DateTime | None


class RestoredSkill(TypedDict):
    skill_id: str
    slug: str


class RestoreResult(TypedDict):
    """A restore job's ``result`` (docs/backup.md): what came back, and notes on what did not."""

    skills: list[RestoredSkill]
    revision_count: int
    from_workspace: str
    notes: list[str]
