"""THE tenant gate: who is asking and what they may read or change.

Every query of tenant data starts here. Objects of a workspace the caller is not a member of
(or that the caller's token is restricted away from) answer ``NotFound`` exactly like objects
that do not exist, so their existence never leaks. Roles come from memberships (for a token
owned by a workspace, from the token's own role there); token scopes can only narrow what the
role allows, never widen it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.db.models import Q, QuerySet

from skills_app import errors
from skills_app.domain import lifecycle
from skills_app.models import (
    ApiToken,
    Invitation,
    Job,
    Membership,
    Skill,
    SkillRevision,
    Webhook,
    WebhookDelivery,
    Workspace,
)
from skills_app.models.tenancy import acted_by

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Defined once, by the lifecycle table; named here too for the gate's many callers.
SCOPES = lifecycle.SCOPES
ROLES = lifecycle.ROLES
ADMIN_ROLES = lifecycle.ADMIN_ROLES


@dataclass
class Actor:
    """The caller of a service: a user, through a token or not, or the system itself.

    ``token`` is None for the console and management commands, which act with the user's full
    role; ``system`` actors (directory loader, seed data) bypass role checks entirely.
    """

    user: User | None
    token: ApiToken | None = None
    via: str = "console"
    ip: str | None = None
    system: bool = False
    _roles: dict[int, str | None] = field(default_factory=dict, repr=False)

    @classmethod
    def for_system(cls, *, via: str = "cli") -> Actor:
        return cls(user=None, via=via, system=True)

    @property
    def workspace_token(self) -> ApiToken | None:
        """The workspace token acting, which acts as itself (docs/contract.md §16); else None."""
        return self.token if self.token is not None and self.token.owned_by_workspace else None

    @property
    def person(self) -> User | None:
        """Whom what the actor writes is attributed to: the user, but nobody for the system and
        for a workspace token (``user`` is then only who made it: never its author)."""
        return None if self.workspace_token is not None else self.user

    def is_author_of(self, revision: SkillRevision) -> bool:
        if self.workspace_token is not None:
            return revision.author_token_id == self.workspace_token.pk
        return self.user is not None and revision.author_id == self.user.pk

    @property
    def label(self) -> str:
        return acted_by(self.user, self.workspace_token) or "system"

    def has_scope(self, scope: str) -> bool:
        return self.token is None or scope in (self.token.scopes or [])

    def role_in(self, workspace: Workspace) -> str | None:
        if self.system:
            return "owner"
        if self.token is not None and self.token.owned_by_workspace:
            # A workspace's token acts with its own role there, whoever created it.
            return self.token.role if workspace.pk == self.token.workspace_id else None
        if self.user is None:
            return None
        if workspace.pk not in self._roles:
            self._roles[workspace.pk] = (
                Membership.objects.filter(workspace=workspace, user=self.user)
                .values_list("role", flat=True)
                .first()
            )
        return self._roles[workspace.pk]


def require_scope(actor: Actor, scope: str) -> None:
    if not actor.has_scope(scope):
        raise errors.PermissionDenied(
            f"This token lacks the '{scope}' scope.", details={"required_scope": scope}
        )


def require_unrestricted(actor: Actor, what: str) -> None:
    """Refuse ``what`` to a token restricted to one workspace: it acts in that workspace only,
    so it cannot reach account-wide things (the user's other tokens, new workspaces)."""
    if actor.token is not None and actor.token.workspace_id is not None:
        raise errors.PermissionDenied(
            f"A token restricted to one workspace cannot {what}.",
            details={"token_workspace_restricted": True},
        )


def readable_workspaces(actor: Actor, *, include_disabled: bool = False) -> QuerySet[Workspace]:
    """The workspaces the actor may see: their memberships, narrowed by a token restriction."""
    if actor.system:
        qs = Workspace.objects.all()
    elif actor.token is not None and actor.token.owned_by_workspace:
        qs = Workspace.objects.filter(pk=actor.token.workspace_id or 0)
    elif actor.user is None:
        return Workspace.objects.none()
    else:
        qs = Workspace.objects.filter(memberships__user=actor.user)
    if actor.token is not None and actor.token.workspace_id is not None:
        qs = qs.filter(pk=actor.token.workspace_id)
    if not include_disabled:
        qs = qs.filter(cloud_skills_enabled=True)
    return qs


def readable_workspace_sql(actor: Actor, column: str) -> tuple[str, list[int]]:
    """``readable_workspaces(actor, include_disabled=True)`` as a SQL condition on ``column``
    (a workspace id column), for the hand-written queries of the recall hot path.

    The same rule as above, in one place: membership of the user, narrowed by the token's
    workspace restriction. Callers check ``cloud_skills_enabled`` themselves, so they can
    answer FEATURE_DISABLED rather than 404.
    """
    if actor.system:
        return "1 = 1", []
    if actor.token is not None and actor.token.owned_by_workspace:
        return f"{column} = %s", [actor.token.workspace_id or 0]
    if actor.user is None:
        return "1 = 0", []
    sql = (
        f"{column} IN (SELECT m.workspace_id FROM {Membership._meta.db_table} m"  # noqa: S608 - table and column names only; values are parameters
        " WHERE m.user_id = %s)"
    )
    params = [actor.user.pk]
    if actor.token is not None and actor.token.workspace_id is not None:
        sql += f" AND {column} = %s"
        params.append(actor.token.workspace_id)
    return sql, params


def _ensure_enabled(workspace: Workspace) -> Workspace:
    if not workspace.cloud_skills_enabled:
        raise errors.FeatureDisabled(details={"workspace": workspace.slug})
    return workspace


def require_enabled_workspace(actor: Actor) -> None:
    """FEATURE_DISABLED when the actor can read workspaces but Cloud Skills is off in all.

    A call that spans several workspaces leaves the switched-off ones out (docs/contract.md §2)
    and calls this when it found nothing, so that "nothing left" answers 403 rather than an
    empty 200.
    """
    if readable_workspaces(actor).exists():
        return
    disabled = list(
        readable_workspaces(actor, include_disabled=True).values_list("slug", flat=True)[:20]
    )
    if disabled:
        raise errors.FeatureDisabled(
            "Cloud Skills is not enabled in any workspace you can read here. Ask staff to "
            "switch it on.",
            details={"workspaces": disabled},
        )


def workspace_for(actor: Actor, slug: str, *, require_enabled: bool = True) -> Workspace:
    workspace = readable_workspaces(actor, include_disabled=True).filter(slug=slug).first()
    if workspace is None:
        raise errors.NotFound(f"Workspace '{slug}' was not found.", details={"workspace": slug})
    return _ensure_enabled(workspace) if require_enabled else workspace


def require_role(actor: Actor, workspace: Workspace, roles: tuple[str, ...] = ROLES) -> str:
    """The actor's role in the workspace, or PermissionDenied if it is not one of ``roles``."""
    role = actor.role_in(workspace)
    if role is None:
        # Not a member at all: the workspace does not exist for this actor.
        raise errors.NotFound("Workspace not found.", details={"workspace": workspace.slug})
    if role not in roles:
        raise errors.PermissionDenied(
            f"This needs the role {' or '.join(roles)} in '{workspace.slug}'; you are {role}.",
            details={"required_roles": list(roles), "role": role},
        )
    return role


def skills_for(actor: Actor, *, workspace: Workspace | None = None) -> QuerySet[Skill]:
    """The skills the actor reads (in enabled workspaces); with ``workspace``, of that one."""
    qs = Skill.objects.filter(workspace__in=readable_workspaces(actor))
    return qs.filter(workspace=workspace) if workspace is not None else qs


def skill_for(actor: Actor, skill_id: str) -> Skill:
    skill = (
        Skill.objects.filter(workspace__in=readable_workspaces(actor, include_disabled=True))
        .select_related("workspace")
        .filter(skill_id=skill_id)
        .first()
    )
    if skill is None:
        raise errors.NotFound(f"Skill '{skill_id}' was not found.", details={"skill_id": skill_id})
    _ensure_enabled(skill.workspace)
    return skill


@dataclass(frozen=True)
class SkillScope:
    """One pass through the gate for a page of one skill: the skill (workspace loaded), the
    actor's role there, the scopes it holds, and the workspaces it reads (a lazy query)."""

    skill: Skill
    role: str
    scopes: frozenset[str]
    workspaces: QuerySet[Workspace]


def skill_in(actor: Actor, workspace: Workspace, skill_id: str) -> SkillScope:
    """A skill of ``workspace`` the actor reads (``skills:read``); any other answers NotFound."""
    require_scope(actor, "skills:read")
    skill = skill_for(actor, skill_id)
    if skill.workspace_id != workspace.pk:
        raise errors.NotFound("Not found in this workspace.")
    return _scope(actor, skill)


def _scope(actor: Actor, skill: Skill) -> SkillScope:
    """``skill`` (its workspace loaded) with what the actor may do there."""
    return SkillScope(
        skill=skill,
        role=require_role(actor, skill.workspace),
        scopes=frozenset(scope for scope in SCOPES if actor.has_scope(scope)),
        workspaces=readable_workspaces(actor),
    )


def revision_in(
    actor: Actor, workspace: Workspace, revision_id: str
) -> tuple[SkillScope, SkillRevision]:
    """A revision of ``workspace`` the actor reads (``skills:read``) with its skill's scope:
    one pass through the gate for the review page; any other answers NotFound."""
    require_scope(actor, "skills:read")
    revision = revision_for(actor, revision_id)
    if revision.workspace_id != workspace.pk:
        raise errors.NotFound("Not found in this workspace.")
    skill = revision.skill
    skill.workspace = revision.workspace
    return _scope(actor, skill), revision


def revisions_for(actor: Actor, *, workspace: Workspace | None = None) -> QuerySet[SkillRevision]:
    """The revisions the actor reads (in enabled workspaces); with ``workspace``, of that one."""
    qs = SkillRevision.objects.filter(workspace__in=readable_workspaces(actor))
    return qs.filter(workspace=workspace) if workspace is not None else qs


def revision_for(actor: Actor, revision_id: str) -> SkillRevision:
    revision = (
        SkillRevision.objects.filter(
            workspace__in=readable_workspaces(actor, include_disabled=True)
        )
        .select_related("skill", "workspace", "author")
        .filter(revision_id=revision_id)
        .first()
    )
    if revision is None:
        raise errors.NotFound(
            f"Revision '{revision_id}' was not found.", details={"revision_id": revision_id}
        )
    _ensure_enabled(revision.workspace)
    return revision


def job_readable(actor: Actor, job: Job) -> bool:
    """A workspace export (a backup of everything) is for admins and owners; an execution's
    result (which may carry what a script made of the workspace's secrets) for its creator and
    the admins and owners; any other job for every member."""
    role = actor.role_in(job.workspace)
    if role is None:
        return False
    if role in ADMIN_ROLES:
        return True
    if job.kind == Job.Kind.EXPORT:
        return "workspace" not in (job.params or {})
    if job.kind == Job.Kind.EXECUTE:
        if actor.workspace_token is not None:  # its own runs, never its maker's
            return job.token_id == actor.workspace_token.pk
        return actor.user is not None and job.created_by_id == actor.user.pk
    return True


def job_for(actor: Actor, job_id: str) -> Job:
    job = (
        Job.objects.filter(workspace__in=readable_workspaces(actor, include_disabled=True))
        .select_related("workspace")
        .defer("input_data", "output_data")
        .filter(job_id=job_id)
        .first()
    )
    if job is None or not job_readable(actor, job):
        raise errors.NotFound(f"Job '{job_id}' was not found.", details={"job_id": job_id})
    _ensure_enabled(job.workspace)
    return job


def token_for(actor: Actor, token_id: str) -> ApiToken:
    """One of the caller's own tokens, or a token of a team the caller owns or administers;
    anyone else's answers 404 like a missing one."""
    not_found = errors.NotFound(
        f"Token '{token_id}' was not found.", details={"token_id": token_id}
    )
    if actor.user is None:
        raise not_found
    token = (
        ApiToken.objects.filter(token_id=token_id)
        .filter(
            Q(user=actor.user, role="")
            | (
                ~Q(role="")
                & Q(
                    workspace__memberships__user=actor.user,
                    workspace__memberships__role__in=ADMIN_ROLES,
                )
            )
        )
        .select_related("workspace")
        .first()
    )
    if token is None:
        raise not_found
    return token


def invitation_for(*, actor: Actor, workspace: Workspace, invitation_id: str) -> Invitation:
    """One invitation of a team, for its owners and admins; anything else is NotFound."""
    require_scope(actor, "workspace:admin")
    require_role(actor, workspace, ADMIN_ROLES)
    invitation = Invitation.objects.filter(workspace=workspace, invitation_id=invitation_id).first()
    if invitation is None:
        raise errors.NotFound("Invitation not found.", details={"id": invitation_id})
    return invitation


def require_workspace_admin(actor: Actor, workspace: Workspace) -> str:
    """The gate of a workspace's settings and secrets (docs/contract.md §2): a ``workspace:admin``
    token (or the console) of an owner or admin; a personal workspace's owner manages their own."""
    require_scope(actor, "workspace:admin")
    return require_role(actor, workspace, ADMIN_ROLES)


def webhook_for(*, actor: Actor, workspace: Workspace, webhook_id: str) -> Webhook:
    """A webhook of ``workspace``, for its owners and admins (``workspace:admin``); one of
    another workspace answers NotFound like one that does not exist."""
    require_workspace_admin(actor, workspace)
    webhook = (
        Webhook.objects.select_related("workspace")
        .filter(workspace=workspace, webhook_id=webhook_id)
        .first()
    )
    if webhook is None:
        raise errors.NotFound("Webhook not found.", details={"id": webhook_id})
    return webhook


def delivery_for(*, actor: Actor, webhook: Webhook, delivery_id: str) -> WebhookDelivery:
    """One logged delivery of ``webhook`` (fetched through ``webhook_for``)."""
    require_workspace_admin(actor, webhook.workspace)
    delivery = (
        WebhookDelivery.objects.select_related("webhook__workspace")
        .filter(webhook=webhook, delivery_id=delivery_id)
        .first()
    )
    if delivery is None:
        raise errors.NotFound("Delivery not found.", details={"id": delivery_id})
    return delivery
