"""A skill's usage (docs/contract.md §19) and the outcomes reported of it (§22), as
``selectors.usage`` answers them to REST and the skill page."""

from typing import TypedDict

from skills_app.domain.shapes.fields import Date, DateTime


class Outcomes(TypedDict):
    success: int
    partial: int
    failure: int
    rate: float | None


class UsageDay(TypedDict):
    date: Date
    level1: int
    level2: int


class UsageRevision(TypedDict):
    revision_id: str
    revision_number: int
    level1: int
    level2: int
    outcomes: Outcomes


class UsageClient(TypedDict):
    name: str
    level1: int
    level2: int
    outcomes: Outcomes


class SkillUsage(TypedDict):
    last_recalled_at: DateTime | None
    days: list[UsageDay]
    by_revision: list[UsageRevision]
    by_client: list[UsageClient]
