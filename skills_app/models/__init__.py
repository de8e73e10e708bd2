from .audit import AuditEntry
from .jobs import Job
from .skills import Blob, Skill, SkillComponent, SkillRevision
from .tenancy import ApiToken, Invitation, Membership, Workspace
from .webhooks import Webhook, WebhookAttempt, WebhookDelivery

__all__ = [
    "ApiToken",
    "AuditEntry",
    "Blob",
    "Invitation",
    "Job",
    "Membership",
    "Skill",
    "SkillComponent",
    "SkillRevision",
    "Webhook",
    "WebhookAttempt",
    "WebhookDelivery",
    "Workspace",
]
