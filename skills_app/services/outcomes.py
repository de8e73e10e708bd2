"""Outcomes (docs/contract.md §22): whoever recalled a revision says how it went.

The request checks and hands the report on; a worker stores it (``outcome_store``), as usage
counts are kept off the recall path (§19). At most one report per reporter (a token, an OAuth
connection's token, or a person in the console) per revision per day (UTC) counts: the first;
the database's unique constraint holds that bound whatever the number of workers. A note is
stored as text and only ever shown escaped."""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime
from typing import TypedDict

from django.db import IntegrityError, transaction

from skills_app.access import Actor, require_scope, revision_for
from skills_app.domain import shapes
from skills_app.domain.evals import outcome_check
from skills_app.infra.queue import OUTCOME_STORE, send_task
from skills_app.models import RevisionOutcome

logger = logging.getLogger(__name__)


class OutcomeMessage(TypedDict):
    """One report as the broker carries it to ``outcome_store`` (JSON: ids and ISO dates)."""

    revision: int
    date: str
    reporter: str
    client_name: str
    token: int | None
    user: int | None
    outcome: str
    note: str
    reported_at: str


def outcome_report(
    *, actor: Actor, revision_id: str, outcome: object, note: object = None
) -> shapes.OutcomeReport:
    """Check a report and hand it on; answers what was accepted (counted once a worker has
    stored it, the first of the reporter's day)."""
    require_scope(actor, "skills:read")
    revision = revision_for(actor, revision_id)
    outcome, text = outcome_check(outcome, note)
    now = datetime.now(UTC)
    token = actor.token
    user_pk = actor.user.pk if actor.user is not None else None
    report: OutcomeMessage = {
        "revision": revision.pk,
        "date": now.date().isoformat(),
        "reporter": f"token:{token.token_id}" if token is not None else f"user:{user_pk}",
        "client_name": (token.name if token is not None else actor.via)[:100],
        "token": token.pk if token is not None else None,
        "user": user_pk,
        "outcome": outcome,
        "note": text,
        "reported_at": now.isoformat(),
    }
    try:
        send_task(OUTCOME_STORE, args=[report])
    except Exception:  # the broker is down: store it here rather than lose it
        logger.warning("outcome stored on the request path: the broker is unreachable")
        outcome_store(report=report)
    return {"revision_id": revision.revision_id, "outcome": outcome, "accepted": True}


def outcome_store(*, report: OutcomeMessage) -> bool:
    """Store one report (a worker); False when the reporter's day already holds one."""
    try:
        with transaction.atomic():
            RevisionOutcome.objects.create(
                revision_id=int(report["revision"]),
                date=date.fromisoformat(str(report["date"])),
                reporter=str(report["reporter"]),
                client_name=str(report["client_name"]),
                token_id=report.get("token"),
                user_id=report.get("user"),
                outcome=str(report["outcome"]),
                note=str(report.get("note") or ""),
                reported_at=datetime.fromisoformat(str(report["reported_at"])),
            )
    except IntegrityError:  # counted already today, or the revision is gone
        return False
    return True
