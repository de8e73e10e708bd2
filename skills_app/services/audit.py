from __future__ import annotations

from typing import Any

from skills_app.access import Actor
from skills_app.models import AuditEntry, Workspace
from skills_app.services.events import emit_from_audit


def audit_record(
    *,
    actor: Actor,
    workspace: Workspace,
    action: str,
    target_type: str = "",
    target_id: str = "",
    data: dict[str, Any] | None = None,
) -> AuditEntry:
    """Write one audit entry; call it inside the transaction of the change it describes.
    The entry is also the hook of product events (webhooks)."""
    entry = AuditEntry.objects.create(
        workspace=workspace,
        actor=actor.person,
        actor_label=actor.label,
        action=action,
        target_type=target_type,
        target_id=target_id,
        data=data or {},
        ip=actor.ip,
        via=actor.via,
    )
    emit_from_audit(entry)
    return entry
