from .audit import AuditEntry
from .jobs import Job
from .skills import Blob, Skill, SkillComponent, SkillRevision
from .tenancy import ApiToken, Membership, Workspace, WorkspaceSecret

__all__ = [
    "ApiToken",
    "AuditEntry",
    "Blob",
    "Job",
    "Membership",
    "Skill",
    "SkillComponent",
    "SkillRevision",
    "Workspace",
    "WorkspaceSecret",
]
