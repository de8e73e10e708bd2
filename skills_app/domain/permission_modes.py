"""Dual sign-off (docs/contract.md §21, OnGrid's persona ``permission_mode``): what a team's
mode, or a token's stricter one, lets a script of each class do."""

from __future__ import annotations

from skills_app.errors import ConfirmationRequired, PermissionDenied, ValidationFailed

READ_ONLY = "read-only"
MUTATING_WITH_CONFIRM = "mutating-with-confirm"
DUAL_SIGN_REQUIRED = "dual-sign-required"
# Least strict first: a stricter mode is a later one.
PERMISSION_MODES = (MUTATING_WITH_CONFIRM, DUAL_SIGN_REQUIRED, READ_ONLY)
DEFAULT_PERMISSION_MODE = MUTATING_WITH_CONFIRM
SIGN_OFFS_FOR_DANGEROUS = 2


def permission_mode_check(mode: object, *, field: str = "permission_mode") -> str:
    if mode not in PERMISSION_MODES:
        raise ValidationFailed(
            f"{field} must be one of {', '.join(PERMISSION_MODES)}.", details={"field": field}
        )
    return str(mode)


def stricter_mode(*modes: str | None) -> str:
    """The strictest of the given modes (None: no mode of its own)."""
    given = [m for m in modes if m]
    return max(given, key=PERMISSION_MODES.index) if given else DEFAULT_PERMISSION_MODE


def check_permission_mode(*, mode: str, script_class: str, confirm: bool, sign_offs: int) -> None:
    """Raise unless ``mode`` lets a script of ``script_class`` run: ``read-only`` runs only
    ``safe``; otherwise ``mutating`` and ``dangerous`` need ``confirm``; ``dangerous`` runs only
    in ``dual-sign-required``, from a revision two distinct reviewers approved, neither its
    author (``sign_offs``)."""
    details = {"permission_mode": mode, "class": script_class}
    if script_class == "safe":
        return
    if mode == READ_ONLY:
        raise PermissionDenied(
            f"The permission mode is read-only: only safe scripts run, not {script_class} ones.",
            details=details,
        )
    if script_class == "dangerous" and mode != DUAL_SIGN_REQUIRED:
        raise PermissionDenied(
            "Dangerous scripts run only where the permission mode is dual-sign-required.",
            details=details,
        )
    if script_class == "dangerous" and sign_offs < SIGN_OFFS_FOR_DANGEROUS:
        raise PermissionDenied(
            f"This dangerous script needs a second sign-off: {sign_offs} of "
            f"{SIGN_OFFS_FOR_DANGEROUS} distinct reviewers (never the author) have approved "
            "this revision.",
            details={**details, "sign_offs": sign_offs, "required": SIGN_OFFS_FOR_DANGEROUS},
        )
    if not confirm:
        raise ConfirmationRequired(
            f'A {script_class} script changes things: send "confirm": true to run it.',
            details=details,
        )


def second_sign_off_missing(
    *, workspace_kind: str, mode: str, script_class: object, sign_offs: int
) -> bool:
    """A dangerous script in a dual-sign-required team with fewer sign-offs than it needs to
    run (``check_permission_mode``): the review page asks for a second reviewer."""
    return (
        workspace_kind == "team"
        and mode == DUAL_SIGN_REQUIRED
        and script_class == "dangerous"
        and sign_offs < SIGN_OFFS_FOR_DANGEROUS
    )
