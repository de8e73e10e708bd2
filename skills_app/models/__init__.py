from skills_app.models.audit import AuditEntry
from skills_app.models.evals import RevisionEvaluation, RevisionOutcome
from skills_app.models.jobs import Job
from skills_app.models.labels import SkillLabel
from skills_app.models.oauth import OAuthConnection
from skills_app.models.reviews import NotificationPreference, RevisionApproval, RevisionComment
from skills_app.models.scans import RevisionScan
from skills_app.models.search import RevisionEmbedding
from skills_app.models.skills import Blob, Skill, SkillComponent, SkillRevision
from skills_app.models.tenancy import ApiToken, Invitation, Membership, Workspace, WorkspaceSecret
from skills_app.models.usage import UsageDay
from skills_app.models.webhooks import Webhook, WebhookAttempt, WebhookDelivery

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
    "RevisionEvaluation",
    "RevisionOutcome",
    "RevisionScan",
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
