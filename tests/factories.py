"""Factories for users, workspaces and skills, built through the real services."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User

from skills_app.access import Actor
from skills_app.domain.bundle import ComponentData, SkillBundle
from skills_app.infra.crypto import secret_encrypt
from skills_app.models import (
    ApiToken,
    Invitation,
    Membership,
    Webhook,
    WebhookDelivery,
    Workspace,
)
from skills_app.services.accounts import token_create, user_create
from skills_app.services.invitations import invitation_create
from skills_app.services.skills import SaveResult, skill_save

_counter = itertools.count(1)

ALL_SCOPES = ["skills:read", "skills:write", "skills:review", "skills:execute", "workspace:admin"]


def make_user(username: str | None = None) -> User:
    return user_create(username=username or f"user-{next(_counter)}")


def actor_for(user: User, *, token: ApiToken | None = None, via: str = "api") -> Actor:
    return Actor(user=user, token=token, via=via)


def personal_ws(user: User) -> Workspace:
    return Workspace.objects.get(slug=user.get_username())


def make_team(
    owner: User, slug: str | None = None, members: dict[User, str] | None = None
) -> Workspace:
    team = Workspace.objects.create(
        slug=slug or f"team-{next(_counter)}",
        name="Team",
        kind=Workspace.Kind.TEAM,
        created_by=owner,
    )
    Membership.objects.create(workspace=team, user=owner, role="owner")
    for user, role in (members or {}).items():
        Membership.objects.create(workspace=team, user=user, role=role)
    return team


def let_authors_approve(team: Workspace) -> None:
    """Switch off "a reviewer other than the author" the way a team of one does (audited)."""
    from skills_app.services.workspace_settings import workspace_settings_update

    owner = Membership.objects.get(workspace=team, role="owner").user
    workspace_settings_update(
        actor=actor_for(owner), workspace=team, require_distinct_reviewer=False
    )
    team.refresh_from_db()


def make_token(user: User, scopes: list[str] | None = None, **kwargs: Any) -> tuple[ApiToken, str]:
    return token_create(
        actor=Actor(user=user, via="cli"),
        user=user,
        name=kwargs.pop("name", "test"),
        scopes=scopes or ALL_SCOPES,
        **kwargs,
    )


def make_invitation(
    inviter: User, team: Workspace, email: str = "guest@example.com", role: str = "member"
) -> Invitation:
    return invitation_create(
        actor=Actor(user=inviter, via="cli"),
        workspace=team,
        email=email,
        role=role,
        public_url="http://testserver/",
    )


def make_webhook(team: Workspace, **delivery: Any) -> tuple[Webhook, WebhookDelivery]:
    """A webhook on skill.archived with one logged delivery (stored directly: no network)."""
    webhook = Webhook.objects.create(
        workspace=team,
        url="https://hooks.example/x",
        events=["skill.archived"],
        secret_ciphertext=secret_encrypt("whsec_s"),
    )
    made = WebhookDelivery.objects.create(
        webhook=webhook, event_id="evt_x", event_type="skill.archived", payload={}, **delivery
    )
    return webhook, made


def bundle(**overrides: Any) -> SkillBundle:
    values: dict[str, Any] = {
        "name": "Deploy runbook",
        "description": "How to deploy safely.",
        "instruction_body": "# Deploy\n\nStep one.\n",
        "frontmatter": {"license": "MIT"},
        "components": (
            ComponentData("templates/t.md", "template", b"template bytes", "text/markdown"),
        ),
    }
    values.update(overrides)
    return SkillBundle(**values)


def save(
    user: User, workspace: Workspace, slug: str = "deploy", intent: str = "draft", **overrides: Any
) -> SaveResult:
    base_revision_id = overrides.pop("base_revision_id", None)
    message = overrides.pop("message", "")
    return skill_save(
        actor=actor_for(user),
        workspace=workspace,
        slug=slug,
        bundle=bundle(**overrides),
        intent=intent,
        base_revision_id=base_revision_id,
        message=message,
    )


@dataclass
class Env:
    owner: User
    admin: User
    member: User
    member2: User
    outsider: User
    personal: Workspace
    team: Workspace

    def role_user(self, role: str) -> User:
        return {"owner": self.owner, "admin": self.admin, "member": self.member}[role]


def build_env() -> Env:
    owner, admin, member, member2, outsider = (make_user() for _ in range(5))
    team = make_team(owner, members={admin: "admin", member: "member", member2: "member"})
    return Env(owner, admin, member, member2, outsider, personal_ws(owner), team)


def publish(user: User, workspace: Workspace, slug: str = "deploy", **overrides: Any) -> SaveResult:
    """Save with intent publish, then (team workspaces) approve as the owner, or as an admin
    where the owner wrote it and the team requires a reviewer other than the author."""
    result = save(user, workspace, slug=slug, intent="publish", **overrides)
    revision = result.revision
    if revision.state == "proposed":
        from skills_app.services.skills import revision_transition

        reviewers = Membership.objects.filter(workspace=workspace, role__in=("owner", "admin"))
        if workspace.reviewer_must_differ:
            reviewers = reviewers.exclude(user=user)
        reviewer = reviewers.order_by("-role").first()  # "owner" before "admin"
        assert reviewer is not None, "no reviewer other than the author: let_authors_approve?"
        revision = revision_transition(
            actor=actor_for(reviewer.user), revision=revision, action="approve"
        )
        return SaveResult(revision=revision, created=result.created)
    return result


def component(path: str, content: bytes | str, ctype: str = "reference") -> ComponentData:
    from skills_app.domain.paths import guess_media_type

    data = content.encode() if isinstance(content, str) else content
    return ComponentData(path, ctype, data, guess_media_type(path, data))
