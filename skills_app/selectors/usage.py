"""Usage of a skill (docs/contract.md §19): its Level 1 and Level 2 answers per day, revision
and client, as the workers have flushed them (``services/usage.py``: within a minute)."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from django.db.models import Count, F, Max, QuerySet, Sum
from django.utils import timezone

from skills_app import errors
from skills_app.access import Actor, require_scope, skill_for
from skills_app.domain.shapes import SkillUsage, UsageClient, UsageRevision
from skills_app.models import RevisionOutcome, Skill, UsageDay
from skills_app.selectors.evals import outcome_figures

USAGE_DEFAULT_DAYS = 30
USAGE_MAX_DAYS = 90


def usage_days(value: str | None) -> int:
    """The ``days`` parameter: 1 to ``USAGE_MAX_DAYS``, default ``USAGE_DEFAULT_DAYS``."""
    if value is None or value == "":
        return USAGE_DEFAULT_DAYS
    try:
        days = int(value)
    except ValueError:
        days = 0
    if not 1 <= days <= USAGE_MAX_DAYS:
        raise errors.ValidationFailed(
            f"days must be a whole number from 1 to {USAGE_MAX_DAYS}.",
            details={"field": "days", "limit": USAGE_MAX_DAYS},
        )
    return days


def _levels(rows: QuerySet[UsageDay, Any]) -> QuerySet[UsageDay, dict[str, Any]]:
    """Level 1 and Level 2 totals (``l1``, ``l2``) of each group of ``rows`` (a ``values()``)."""
    return rows.annotate(l1=Sum("level1"), l2=Sum("level2"))


def skill_usage(*, actor: Actor, skill_id: str, days: int = USAGE_DEFAULT_DAYS) -> SkillUsage:
    require_scope(actor, "skills:read")
    return usage_of(skill_for(actor, skill_id), days=days)


def usage_of(skill: Skill, *, days: int = USAGE_DEFAULT_DAYS) -> SkillUsage:
    """``skill``'s usage over the last ``days`` days (today, UTC, included), every day listed."""
    today = timezone.now().date()
    since = today - timedelta(days=days - 1)
    rows = UsageDay.objects.filter(revision__skill=skill)
    last: datetime | None = rows.aggregate(last=Max("last_recalled_at"))["last"]
    window = rows.filter(date__gte=since)
    per_day: dict[date, tuple[int, int]] = {
        row["date"]: (row["l1"], row["l2"]) for row in _levels(window.values("date").order_by())
    }
    by_revision = _levels(
        window.values(
            rid=F("revision__revision_id"), number=F("revision__revision_number")
        ).order_by()
    ).order_by("-number")
    by_client = (
        _levels(window.values("client_name").order_by())
        .annotate(total=F("l1") + F("l2"))
        .order_by("-total", "client_name")
    )
    revisions: dict[str, UsageRevision] = {
        row["rid"]: {
            "revision_id": row["rid"],
            "revision_number": row["number"],
            "level1": row["l1"],
            "level2": row["l2"],
            "outcomes": outcome_figures({}),
        }
        for row in by_revision
    }
    clients: dict[str, UsageClient] = {
        row["client_name"]: {
            "name": row["client_name"],
            "level1": row["l1"],
            "level2": row["l2"],
            "outcomes": outcome_figures({}),
        }
        for row in by_client
    }
    _add_outcomes(skill, since, revisions, clients)
    return {
        "last_recalled_at": last.isoformat() if last is not None else None,
        "days": [
            {"date": day.isoformat(), "level1": l1, "level2": l2}
            for day in (since + timedelta(days=n) for n in range(days))
            for l1, l2 in (per_day.get(day, (0, 0)),)
        ],
        "by_revision": sorted(revisions.values(), key=lambda r: -r["revision_number"]),
        "by_client": list(clients.values()),
    }


def _add_outcomes(
    skill: Skill,
    since: date,
    revisions: dict[str, UsageRevision],
    clients: dict[str, UsageClient],
) -> None:
    """The reported outcomes (docs/contract.md §22) of the window, per revision and client; a
    revision or client with outcomes but no recall in the window is listed too."""
    rows = (
        RevisionOutcome.objects.filter(revision__skill=skill, date__gte=since)
        .values(
            "outcome",
            "client_name",
            rid=F("revision__revision_id"),
            number=F("revision__revision_number"),
        )
        .annotate(n=Count("id"))
        .order_by()
    )
    per_revision: dict[str, dict[str, int]] = {}
    per_client: dict[str, dict[str, int]] = {}
    for row in rows:
        revisions.setdefault(
            row["rid"],
            {
                "revision_id": row["rid"],
                "revision_number": row["number"],
                "level1": 0,
                "level2": 0,
                "outcomes": outcome_figures({}),
            },
        )
        clients.setdefault(
            row["client_name"],
            {"name": row["client_name"], "level1": 0, "level2": 0, "outcomes": outcome_figures({})},
        )
        for bucket in (
            per_revision.setdefault(row["rid"], {}),
            per_client.setdefault(row["client_name"], {}),
        ):
            bucket[row["outcome"]] = bucket.get(row["outcome"], 0) + row["n"]
    for rid, counts in per_revision.items():
        revisions[rid]["outcomes"] = outcome_figures(counts)
    for name, counts in per_client.items():
        clients[name]["outcomes"] = outcome_figures(counts)
