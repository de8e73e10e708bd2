"""The stale-job verdict: pure, on the job's state and timestamps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from skills_app.domain.jobs import QUEUED_STALE_AFTER, STALE_AFTER, stale_verdict

NOW = datetime(2026, 1, 1, 12, tzinfo=UTC)
SECOND = timedelta(seconds=1)


@pytest.mark.parametrize(
    ("state", "started_at", "created_at", "stale"),
    [
        ("running", NOW - STALE_AFTER - SECOND, NOW - QUEUED_STALE_AFTER * 2, "stopped"),
        ("running", NOW - STALE_AFTER + SECOND, NOW - QUEUED_STALE_AFTER * 2, None),
        ("running", None, NOW - QUEUED_STALE_AFTER * 2, None),
        ("queued", None, NOW - QUEUED_STALE_AFTER - SECOND, "No worker"),
        ("queued", None, NOW - QUEUED_STALE_AFTER + SECOND, None),
        ("succeeded", NOW - STALE_AFTER * 9, NOW - QUEUED_STALE_AFTER * 9, None),
        ("failed", NOW - STALE_AFTER * 9, NOW - QUEUED_STALE_AFTER * 9, None),
    ],
)
def test_stale_verdict(
    state: str, started_at: datetime | None, created_at: datetime, stale: str | None
) -> None:
    verdict = stale_verdict(state=state, started_at=started_at, created_at=created_at, now=NOW)
    if stale is None:
        assert verdict is None
    else:
        assert verdict is not None
        assert stale in verdict
