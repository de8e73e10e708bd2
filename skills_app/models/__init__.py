from .audit import AuditEntry
from .jobs import Job
from .oauth import OAuthConnection
from .reviews import NotificationPreference, RevisionApproval, RevisionComment
from .skills import Blob, Skill, SkillComponent, SkillRevision
from .tenancy import ApiToken, Membership, Workspace, WorkspaceSecret

__all__ = [
    "ApiToken",
    "AuditEntry",
    "Blob",
    "Job",
    "Membership",
    "NotificationPreference",
    "OAuthConnection",
    "RevisionApproval",
    "RevisionComment",
    "Skill",
    "SkillComponent",
    "SkillRevision",
    "Workspace",
    "WorkspaceSecret",
]
