"""A workspace's settings and secrets, owned by its owners and admins (docs/contract.md §2).

Every change is audited; a secret's value never is: entries name the secret only.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Model

from skills_app import errors
from skills_app.access import Actor, require_workspace_admin
from skills_app.domain.limits import workspace_name_clean
from skills_app.domain.permission_modes import permission_mode_check
from skills_app.domain.secrets import validate_secret_name, validate_secret_value
from skills_app.infra.crypto import secret_encrypt, secret_reencrypt
from skills_app.models import Webhook, Workspace, WorkspaceSecret
from skills_app.services.audit import audit_record

WORKSPACE_SETTINGS = (
    "name",
    "require_distinct_reviewer",
    "allow_dangerous_scripts",
    "required_approvals",
    "permission_mode",
)
# More approvals than this is a typo, not a review policy.
MAX_REQUIRED_APPROVALS = 10


def _flag(field: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise errors.ValidationFailed(f"{field} must be true or false.", details={"field": field})
    return value


def _approvals(workspace: Workspace, value: object) -> int:
    """1 to MAX_REQUIRED_APPROVALS; a personal workspace has no review, so only 1."""
    top = 1 if workspace.is_personal else MAX_REQUIRED_APPROVALS
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
        raise errors.ValidationFailed(
            f"required_approvals must be a whole number from 1 to {top}"
            + (" (a personal workspace has no review)." if workspace.is_personal else "."),
            details={"field": "required_approvals", "min": 1, "max": top},
        )
    return value


def _workspace_change(
    *, actor: Actor, workspace: Workspace, wanted: dict[str, str | bool | int], action: str
) -> Workspace:
    """Store the ``wanted`` fields that differ, under the row's lock, with one audit entry
    ``action`` listing each change as ``{"from", "to"}``; nothing changed, nothing written."""
    locked = Workspace.objects.select_for_update().get(pk=workspace.pk)
    changes = {
        field: {"from": getattr(locked, field), "to": value}
        for field, value in wanted.items()
        if getattr(locked, field) != value
    }
    if changes:
        for field, change in changes.items():
            setattr(locked, field, change["to"])
        locked.save(update_fields=list(changes))
        audit_record(
            actor=actor,
            workspace=locked,
            action=action,
            target_type="workspace",
            target_id=locked.slug,
            data=changes,
        )
    return locked


@transaction.atomic
def workspace_settings_update(
    *,
    actor: Actor,
    workspace: Workspace,
    name: str | None = None,
    require_distinct_reviewer: bool | None = None,
    allow_dangerous_scripts: bool | None = None,
    required_approvals: int | None = None,
    permission_mode: str | None = None,
) -> Workspace:
    """Change the given settings (None = leave as is); one audit entry lists what changed."""
    require_workspace_admin(actor, workspace)
    wanted: dict[str, str | bool | int] = {}
    if name is not None:
        wanted["name"] = workspace_name_clean(name)
    if require_distinct_reviewer is not None:
        wanted["require_distinct_reviewer"] = _flag(
            "require_distinct_reviewer", require_distinct_reviewer
        )
    if allow_dangerous_scripts is not None:
        wanted["allow_dangerous_scripts"] = _flag(
            "allow_dangerous_scripts", allow_dangerous_scripts
        )
    if required_approvals is not None:
        wanted["required_approvals"] = _approvals(workspace, required_approvals)
    if permission_mode is not None:
        if workspace.kind != Workspace.Kind.TEAM:
            raise errors.ValidationFailed(
                "A permission mode is a team's setting; a personal workspace has none.",
                details={"field": "permission_mode"},
            )
        wanted["permission_mode"] = permission_mode_check(permission_mode)
    return _workspace_change(
        actor=actor, workspace=workspace, wanted=wanted, action="workspace.settings.change"
    )


@transaction.atomic
def workspace_feature_set(*, actor: Actor, workspace: Workspace, enabled: bool) -> Workspace:
    """Switch Cloud Skills on or off for a workspace (``cloud_skills_enabled``): staff only (the
    Django admin acts as the system), one audit entry ``workspace.feature.change`` when it
    changes."""
    if not actor.system:
        raise errors.PermissionDenied("Only staff switch Cloud Skills for a workspace.")
    return _workspace_change(
        actor=actor,
        workspace=workspace,
        wanted={"cloud_skills_enabled": _flag("cloud_skills_enabled", enabled)},
        action="workspace.feature.change",
    )


@transaction.atomic
def workspace_secret_set(
    *, actor: Actor, workspace: Workspace, name: str, value: str
) -> WorkspaceSecret:
    """Create or replace a secret. Its value is encrypted here and never shown again."""
    require_workspace_admin(actor, workspace)
    validate_secret_name(name)
    ciphertext = secret_encrypt(validate_secret_value(value))
    secret, created = WorkspaceSecret.objects.update_or_create(
        workspace=workspace,
        name=name,
        defaults={"ciphertext": ciphertext, "updated_by": actor.user},
    )
    audit_record(
        actor=actor,
        workspace=workspace,
        action="workspace.secret.set",
        target_type="secret",
        target_id=name,
        data={"created": created},
    )
    return secret


@transaction.atomic
def workspace_secret_delete(*, actor: Actor, workspace: Workspace, name: str) -> None:
    require_workspace_admin(actor, workspace)
    deleted, _ = WorkspaceSecret.objects.filter(workspace=workspace, name=name).delete()
    if not deleted:
        raise errors.NotFound(f"No secret named '{name}'.", details={"name": name})
    audit_record(
        actor=actor,
        workspace=workspace,
        action="workspace.secret.delete",
        target_type="secret",
        target_id=name,
    )


# Every encrypted column: what the rotation re-encrypts.
ENCRYPTED_FIELDS: tuple[tuple[type[Model], str], ...] = (
    (WorkspaceSecret, "ciphertext"),
    (Webhook, "secret_ciphertext"),
)


def workspace_secrets_rotate(*, batch: int = 500) -> int:
    """Re-encrypt every stored secret (workspace secrets and webhook signing secrets) with the
    first ``XMEMO_SECRETS_KEY`` key (operators run it through ``manage.py
    rotate_workspace_secrets`` after prepending a new key). Returns the count.

    Each batch is its own transaction, so a long rotation never holds every row locked; running
    it again is harmless.
    """
    rotated = 0
    for model, field in ENCRYPTED_FIELDS:
        last = 0
        while True:
            with transaction.atomic():
                rows = list(
                    model._default_manager.select_for_update()
                    .filter(pk__gt=last)
                    .order_by("pk")[:batch]
                )
                for row in rows:
                    setattr(row, field, secret_reencrypt(getattr(row, field)))
                model._default_manager.bulk_update(rows, [field])
            if not rows:
                break
            rotated += len(rows)
            last = rows[-1].pk
    return rotated
