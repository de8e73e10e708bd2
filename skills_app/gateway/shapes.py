"""The JSON shapes of the answers (docs/contract.md §7): skills, revisions, webhooks and their
deliveries, each built here once from the objects and typed values the selectors and services
return, for every door that answers JSON.

Only the shapes: the bytes of every answer are ``domain.json_bytes.encode_json``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from skills_app.domain import shapes
from skills_app.domain.bundle import ComponentEntry
from skills_app.models import Skill, SkillRevision, Webhook, WebhookDelivery


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


class Saved(Protocol):
    """What ``services.save.save_from_payload`` returns (its ``SaveOutcome``)."""

    @property
    def revision(self) -> SkillRevision: ...
    @property
    def created(self) -> bool: ...
    @property
    def warnings(self) -> Sequence[Any]: ...


def save_as_dict(saved: Saved) -> shapes.Save:
    """The answer of a save (docs/contract.md §6), with the lint's advice (§17): REST's
    ``POST /v1/skills/save`` and MCP's ``save_cloud_skill`` alike."""
    revision = saved.revision
    return {
        "skill_id": revision.skill.skill_id,
        "revision_id": revision.revision_id,
        "revision_number": revision.revision_number,
        "state": revision.state,
        "canonical_hash": revision.canonical_hash,
        "created": saved.created,
        "warnings": list(saved.warnings),
    }


def skill_as_dict(skill: Skill) -> shapes.Skill:
    """A skill with its latest and published revisions loaded (``awaiting_review`` annotated
    by the selector; 0 when it is not)."""
    latest = skill.latest_revision
    published = skill.published_revision
    return {
        "skill_id": skill.skill_id,
        "slug": skill.slug,
        "workspace": skill.workspace.slug,
        "scope": skill.workspace.kind,
        "status": skill.status,
        "name": skill.search_name or (latest.name if latest else ""),
        "description": skill.search_description or (latest.description if latest else ""),
        "model_invocable": skill.model_invocable,
        "revision_count": skill.revision_count,
        "published_revision": (
            {"revision_id": published.revision_id, "revision_number": published.revision_number}
            if published
            else None
        ),
        "latest_revision": (
            {
                "revision_id": latest.revision_id,
                "revision_number": latest.revision_number,
                "state": latest.state,
            }
            if latest
            else None
        ),
        "awaiting_review": getattr(skill, "awaiting_review", 0),
        "created_at": skill.created_at.isoformat(),
        "updated_at": skill.updated_at.isoformat(),
    }


def revision_as_dict(rev: SkillRevision) -> shapes.Revision:
    """A revision as lists show it: no body, frontmatter or manifest."""
    return {
        "revision_id": rev.revision_id,
        "skill_id": rev.skill.skill_id,
        "slug": rev.skill.slug,
        "workspace": rev.workspace.slug,
        "revision_number": rev.revision_number,
        "state": rev.state,
        "name": rev.name,
        "description": rev.description,
        "canonical_hash": rev.canonical_hash,
        "parent_revision_id": rev.parent.revision_id if rev.parent else None,
        "author": rev.author_label,
        "imported_author": rev.imported_author,
        "message": rev.message,
        "source": rev.source,
        "source_ref": rev.source_ref,
        "created_at": rev.created_at.isoformat(),
        "state_changed_at": _iso(rev.state_changed_at),
        "reviewed_by": rev.reviewer_label,
        "imported_reviewer": rev.imported_reviewer,
        "reviewed_at": _iso(rev.reviewed_at),
        "review_comment": rev.review_comment,
    }


def revision_detail_as_dict(
    rev: SkillRevision,
    *,
    components: Sequence[ComponentEntry],
    approvals: list[shapes.Approval],
) -> shapes.RevisionDetail:
    """A revision with its body, frontmatter, approvals and component manifest."""
    return {
        **revision_as_dict(rev),
        "frontmatter": rev.frontmatter,
        "instruction_body": rev.instruction_body,
        "answers_revision_id": (rev.answers_revision.revision_id if rev.answers_revision else None),
        "approvals": approvals,
        "components": [
            {
                "logical_path": entry.logical_path,
                "type": entry.type,
                "content_hash": entry.content_hash,
                "size": entry.size,
                "media_type": entry.media_type,
            }
            for entry in components
        ],
    }


def webhook_as_dict(webhook: Webhook) -> shapes.Webhook:
    return {
        "id": webhook.webhook_id,
        "url": webhook.url,
        "events": list(webhook.events),
        "created_at": webhook.created_at.isoformat(),
    }


def delivery_as_dict(delivery: WebhookDelivery) -> shapes.WebhookDelivery:
    """A logged delivery with every attempt (prefetch ``attempt_log`` for a list)."""
    return {
        "id": delivery.delivery_id,
        "event_id": delivery.event_id,
        "type": delivery.event_type,
        "state": delivery.state,
        "created_at": delivery.created_at.isoformat(),
        "attempts": [
            {
                "number": a.number,
                "status_code": a.status_code,
                "latency_ms": a.latency_ms,
                "response_excerpt": a.response_excerpt,
                "error": a.error,
                "at": a.created_at.isoformat(),
            }
            for a in delivery.attempt_log.all()
        ],
    }
