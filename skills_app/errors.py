"""The one exception hierarchy of the product.

Every failure a caller can act on is an ``XmemoError`` with a stable ``code`` (docs/contract.md §7)
and an HTTP ``status``. The REST exception handler, the MCP tools and the console all map these the
same way, so a rule raises once and every front door reports it alike.
"""

from __future__ import annotations

from typing import Any


class XmemoError(Exception):
    code = "ERROR"
    status = 400
    default_message = "The request could not be completed."

    def __init__(
        self, message: str | None = None, *, details: dict[str, Any] | None = None
    ) -> None:
        self.message = message or self.default_message
        self.details: dict[str, Any] = details or {}
        super().__init__(self.message)

    def as_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details}


class ValidationFailed(XmemoError):
    code = "VALIDATION_ERROR"
    default_message = "The input is not valid."


class BodyTooLarge(XmemoError):
    code = "BODY_TOO_LARGE"
    status = 413
    default_message = "The instruction body is larger than 65,536 bytes."


class ComponentTooLarge(XmemoError):
    code = "COMPONENT_TOO_LARGE"
    status = 413
    default_message = "A component is larger than 131,072 bytes."


class TooManyComponents(XmemoError):
    code = "TOO_MANY_COMPONENTS"
    default_message = "A revision may hold at most 50 components."


class InvalidPath(XmemoError):
    code = "INVALID_PATH"
    default_message = "A component path is not a valid relative POSIX path."


class InvalidTransition(XmemoError):
    code = "INVALID_TRANSITION"
    status = 409
    default_message = "That lifecycle action is not possible from the revision's current state."


class PermissionDenied(XmemoError):
    code = "PERMISSION_DENIED"
    status = 403
    default_message = "You do not have permission to do that."


class AuthenticationRequired(XmemoError):
    code = "AUTHENTICATION_REQUIRED"
    status = 401
    default_message = "Authentication is required: send 'Authorization: Bearer <token>'."


class NotFound(XmemoError):
    code = "NOT_FOUND"
    status = 404
    default_message = "Not found."


class Conflict(XmemoError):
    code = "CONFLICT"
    status = 409
    default_message = "Someone else changed this first; reload and try again."


class SlugTaken(Conflict):
    """A save meant to create a skill (``expect_new``) found one of that slug already there."""

    default_message = "A skill with that slug already exists in this workspace."


class InvitationUnusable(XmemoError):
    """An invitation link that was used, revoked or has expired (``details.reason`` says which)."""

    code = "INVITATION_UNUSABLE"
    status = 410
    default_message = "This invitation can no longer be used. Ask the team for a new one."


class AmbiguousSlug(XmemoError):
    code = "AMBIGUOUS_SLUG"
    status = 409
    default_message = "That slug exists in more than one workspace; qualify it as WORKSPACE/SLUG."


class RevisionIdRequired(XmemoError):
    code = "REVISION_ID_REQUIRED"
    default_message = "Resource recall needs the revision_id you got from Level 1."


class NoPublishedRevision(XmemoError):
    code = "NO_PUBLISHED_REVISION"
    status = 404
    default_message = "The skill has no published revision."


class LabelNotFound(XmemoError):
    code = "LABEL_NOT_FOUND"
    status = 404
    default_message = "The skill has no label of that name."


class UnsafeArchive(XmemoError):
    code = "UNSAFE_ARCHIVE"
    default_message = "The archive is unsafe and was refused."


class UnsupportedFormat(XmemoError):
    code = "UNSUPPORTED_FORMAT"
    status = 415
    default_message = "That format is not supported."


class ImportHostNotAllowed(XmemoError):
    code = "IMPORT_HOST_NOT_ALLOWED"
    default_message = "Imports are only allowed from the configured hosts."


class SandboxUnavailable(XmemoError):
    code = "SANDBOX_UNAVAILABLE"
    status = 503
    default_message = "The script sandbox is unavailable; nothing was run."


class NotReady(XmemoError):
    code = "NOT_READY"
    status = 503
    default_message = "Not ready to serve."


class RateLimited(XmemoError):
    code = "RATE_LIMITED"
    status = 429
    default_message = "Too many requests; slow down."


class UploadsPending(XmemoError):
    """The user already holds the bound of stored uploads (import and restore jobs not ended)."""

    code = "UPLOADS_PENDING"
    status = 429
    default_message = "Too many of your uploads are still waiting to be processed."


class RenderedTooLarge(XmemoError):
    code = "RENDERED_TOO_LARGE"
    status = 413
    default_message = "The rendered body would be larger than 262,144 bytes (256 KiB)."


class FeatureDisabled(XmemoError):
    code = "FEATURE_DISABLED"
    status = 403
    default_message = "Cloud Skills is not enabled for this workspace. Ask staff to switch it on."


class SecretDetected(XmemoError):
    """Push protection (docs/contract.md §21): the content holds a live secret."""

    code = "SECRET_DETECTED"
    default_message = "The content holds a secret; remove it, or acknowledge it to store it."


class ScanBlocked(XmemoError):
    """The gate (docs/contract.md §21): the revision's scan says ``block`` and no owner has
    overridden it."""

    code = "SCAN_BLOCKED"
    status = 409
    default_message = "The revision's scan blocks this; an owner may override it with a reason."


class ConfirmationRequired(XmemoError):
    """Dual sign-off (docs/contract.md §21): a mutating script runs only when the request
    confirms it."""

    code = "CONFIRMATION_REQUIRED"
    status = 409
    default_message = 'This script changes things: send "confirm": true to run it.'


class ScriptFailed(XmemoError):
    """A sandboxed script ran and failed (exit code, timeout, limits, protocol)."""

    code = "SCRIPT_FAILED"
    status = 422
    default_message = "The script failed."


class JobFailed(XmemoError):
    """A background job could not finish for a reason outside the caller's input."""

    code = "JOB_FAILED"
    status = 500
    default_message = "The job failed."
