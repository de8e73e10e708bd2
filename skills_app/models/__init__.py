from .audit import AuditEntry
from .jobs import Job
from .labels import SkillLabel
from .oauth import OAuthConnection
from .reviews import NotificationPreference, RevisionApproval, RevisionComment
from .search import RevisionEmbedding
from .skills import Blob, Skill, SkillComponent, SkillRevision
from .tenancy import ApiToken, Invitation, Membership, Workspace, WorkspaceSecret
from .usage import UsageDay
from .webhooks import Webhook, WebhookAttempt, WebhookDelivery

__all__ = [
    "ApiToken",
    "AuditEntry",
    "Blob",
    "Invitation",
    "Job",
    "Membership",
    "NotificationPreference",
    "OAuthConnection",
    "RevisionApproval",
    "RevisionComment",
    "RevisionEmbedding",
    "Skill",
    "SkillComponent",
    "SkillLabel",
    "SkillRevision",
    "UsageDay",
    "Webhook",
    "WebhookAttempt",
    "WebhookDelivery",
    "Workspace",
    "WorkspaceSecret",
]
