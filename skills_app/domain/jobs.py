"""When a job reads as failed although its row says otherwise: its worker vanished, or no
worker ever took it. Pure, so a read can answer the verdict without writing it; the services
write the same verdict (``services.jobs.run.jobs_fail_stale``) with the same rules."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class StaleRule:
    state: str
    """The job state the rule applies to."""
    since: str
    """The job's timestamp the age is measured from (a field name of the job)."""
    after: timedelta
    message: str


STALE_AFTER = timedelta(minutes=15)
QUEUED_STALE_AFTER = timedelta(hours=1)

STALE_RULES = (
    StaleRule(
        "running", "started_at", STALE_AFTER, "The worker running this job stopped; start it again."
    ),
    StaleRule(
        "queued",
        "created_at",
        QUEUED_STALE_AFTER,
        "No worker picked this job up; check that the workers are running.",
    ),
)


def stale_verdict(
    *, state: str, started_at: datetime | None, created_at: datetime, now: datetime
) -> str | None:
    """The failure message a job in ``state`` reads with at ``now``, or None if it is not
    stale."""
    stamps = {"started_at": started_at, "created_at": created_at}
    for rule in STALE_RULES:
        since = stamps[rule.since]
        if state == rule.state and since is not None and now - since > rule.after:
            return rule.message
    return None
