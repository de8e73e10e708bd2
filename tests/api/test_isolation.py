"""Tenant isolation, walked over every URL pattern of the API (ARCHITECTURE practice 4).

The patterns are enumerated from ``skills_app.api.urls``; each one (and each of its HTTP
methods) must have an entry in ``CASES`` below, so a new endpoint without one fails this test
instead of going unchecked. Every call is made with a full-scope token of a user who is not a
member of the victim's workspaces, aimed at the victim's objects: it must answer 404 (or, for
lists and search, leave the victim's objects out), and nothing of the victim's may change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, reverse
from django.utils import timezone

from skills_app.access import Actor
from skills_app.api import urls as api_urls
from skills_app.models import (
    ApiToken,
    AuditEntry,
    Invitation,
    Job,
    Membership,
    Skill,
    SkillRevision,
    Webhook,
    WebhookDelivery,
    Workspace,
    WorkspaceSecret,
)
from skills_app.services.workspace_settings import workspace_secret_set
from tests.api.conftest import Api, ApiFactory
from tests.factories import (
    Env,
    component,
    make_invitation,
    make_token,
    make_webhook,
    personal_ws,
    publish,
    save,
)

PUBLIC = {"schema", "docs", "not-found"}
METHODS = ("get", "post", "put", "patch", "delete")


def api_patterns() -> Iterator[tuple[str, URLPattern]]:
    def walk(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            else:
                assert pattern.name, f"API pattern {pattern.pattern} needs a name"
                yield pattern.name, pattern

    yield from walk(api_urls.urlpatterns)


def methods_of(pattern: URLPattern) -> list[str]:
    view_class = getattr(pattern.callback, "cls", None)
    if view_class is None:
        return ["get"]
    return [m for m in METHODS if hasattr(view_class, m)]


@dataclass
class Victim:
    env: Env
    skill: Skill
    published: SkillRevision
    draft: SkillRevision
    personal_skill: Skill
    token: ApiToken
    member_username: str
    job: Job
    invitation_id: str
    webhook: Webhook
    delivery: WebhookDelivery


@dataclass
class Call:
    """One request: path kwargs, query or JSON body, and what the stranger must get."""

    kwargs: dict[str, str] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] | None = None
    expect: int = 404
    # For lists and search: what must not appear in the stranger's answer.
    absent: list[str] = field(default_factory=list)
    # Expected status for the victim's own owner (positive control); None = not checked.
    owner_expect: int | None = None


def _cases(v: Victim) -> dict[str, dict[str, list[Call]]]:
    team = v.env.team.slug
    skill_id = v.skill.skill_id
    rev = v.published.revision_id
    secret_bits = [skill_id, v.personal_skill.skill_id, rev, v.draft.revision_id]
    return {
        "recall": {
            "get": [
                Call(query={"slug": f"{team}/deploy"}, owner_expect=200),
                Call(query={"slug": "deploy", "workspace": team}, owner_expect=200),
                Call(query={"slug": "deploy", "revision_id": rev}, owner_expect=200),
                Call(query={"slug": f"{team}/deploy", "revision_id": rev, "resource": "r.md"}),
                Call(query={"revision_id": rev, "resource": "r.md"}, owner_expect=200),
                Call(query={"query": "deploy", "workspace": team}, owner_expect=200),
                Call(query={"query": "deploy"}, expect=200, absent=secret_bits),
            ]
        },
        "skill-save": {
            "post": [
                Call(
                    body={
                        "workspace": team,
                        "slug": "deploy",
                        "name": "Hijack",
                        "description": "x",
                        "instruction_body": "x",
                        "intent": "publish",
                    }
                )
            ]
        },
        "skill-lint": {
            "post": [
                Call(
                    body={
                        "workspace": team,
                        "slug": "deploy",
                        "name": "Probe",
                        "description": "x",
                        "instruction_body": "x",
                    }
                )
            ]
        },
        "sync": {
            "get": [
                Call(expect=200, absent=secret_bits),
                Call(query={"workspace": team}, owner_expect=200),
            ]
        },
        "revision-bundle": {
            "get": [
                Call({"revision_id": rev}, owner_expect=200),
                Call({"revision_id": v.draft.revision_id}),
            ]
        },
        "skill-list": {
            "get": [
                Call(expect=200, absent=secret_bits),
                Call(query={"workspace": team}, owner_expect=200),
            ]
        },
        "skill-detail": {
            "get": [Call({"skill_id": skill_id}, owner_expect=200)],
            "delete": [Call({"skill_id": skill_id})],
        },
        "skill-archive": {"post": [Call({"skill_id": skill_id})]},
        "skill-unarchive": {"post": [Call({"skill_id": skill_id})]},
        "skill-revisions": {"get": [Call({"skill_id": skill_id}, owner_expect=200)]},
        "skill-diff": {
            "get": [
                Call({"skill_id": skill_id}, owner_expect=200),
                Call({"skill_id": skill_id}, query={"from": rev, "to": v.draft.revision_id}),
            ]
        },
        "skill-labels": {"get": [Call({"skill_id": skill_id}, owner_expect=200)]},
        "skill-label": {
            "put": [Call({"skill_id": skill_id, "name": "production"}, body={"revision_id": rev})],
            "delete": [Call({"skill_id": skill_id, "name": "production"})],
        },
        "skill-usage": {"get": [Call({"skill_id": skill_id}, owner_expect=200)]},
        "revision-detail": {"get": [Call({"revision_id": rev}, owner_expect=200)]},
        "revision-component": {
            "get": [Call({"revision_id": rev, "logical_path": "r.md"}, owner_expect=200)]
        },
        "revision-action": {
            "post": [
                Call({"revision_id": revision, "action": action}, body={"comment": "hostile"})
                for revision in (rev, v.draft.revision_id)
                for action in (
                    "propose",
                    "withdraw",
                    "approve",
                    "reject",
                    "request_changes",
                    "publish",
                    "deprecate",
                    "restore",
                )
            ]
        },
        "workspace-list": {
            "get": [Call(expect=200, absent=[f'"{team}"', f'"{v.env.personal.slug}"'])],
            # Creating one's own team is allowed; it must not touch the victim's.
            "post": [Call(body={"slug": "stranger-team", "name": "Mine"}, expect=201)],
        },
        "member-list": {
            "get": [Call({"ws": team}, owner_expect=200)],
            "post": [Call({"ws": team}, body={"username": "stranger", "role": "owner"})],
        },
        "member-detail": {
            "patch": [Call({"ws": team, "username": v.member_username}, body={"role": "owner"})],
            "delete": [Call({"ws": team, "username": v.member_username})],
        },
        "audit-list": {"get": [Call({"ws": team}, owner_expect=200)]},
        "workspace-detail": {
            "patch": [
                Call(
                    {"ws": team},
                    body={"name": "Mine", "allow_dangerous_scripts": True},
                    owner_expect=200,
                )
            ]
        },
        "secret-list": {"get": [Call({"ws": team}, owner_expect=200, absent=["VICTIM_KEY"])]},
        "secret-detail": {
            "put": [
                Call({"ws": team, "name": "VICTIM_KEY"}, body={"value": "stolen"}),
                Call({"ws": team, "name": "NEW_KEY"}, body={"value": "planted"}),
            ],
            "delete": [Call({"ws": team, "name": "VICTIM_KEY"})],
        },
        "workspace-restore": {"post": [Call({"ws": team}, body={})]},
        "invitation-list": {
            "get": [Call({"ws": team}, owner_expect=200, absent=["guest@example.com"])],
            "post": [Call({"ws": team}, body={"email": "stranger@example.com", "role": "owner"})],
        },
        "invitation-detail": {"delete": [Call({"ws": team, "invitation_id": v.invitation_id})]},
        "webhook-list": {
            "get": [Call({"ws": team}, owner_expect=200, absent=[v.webhook.url])],
            "post": [Call({"ws": team}, body={"url": "https://example.com/", "events": []})],
        },
        "webhook-detail": {"delete": [Call({"ws": team, "webhook_id": v.webhook.webhook_id})]},
        "webhook-deliveries": {
            "get": [Call({"ws": team, "webhook_id": v.webhook.webhook_id}, owner_expect=200)]
        },
        "webhook-redeliver": {
            "post": [
                Call(
                    {
                        "ws": team,
                        "webhook_id": v.webhook.webhook_id,
                        "delivery_id": v.delivery.delivery_id,
                    }
                )
            ]
        },
        "token-list": {
            "get": [Call(expect=200, absent=[v.token.token_id])],
            "post": [Call(body={"name": "x", "scopes": ["skills:read"], "workspace": team})],
        },
        # The caller's own preferences: nothing of the victim's to reach.
        "notifications": {
            "get": [Call(expect=200)],
            "patch": [Call(body={"comments": False}, expect=200)],
        },
        "token-detail": {"delete": [Call({"token_id": v.token.token_id})]},
        "revision-evals": {"get": [Call({"revision_id": rev}, owner_expect=200)]},
        "revision-scan": {"get": [Call({"revision_id": rev}, owner_expect=200)]},
        "revision-scan-sarif": {"get": [Call({"revision_id": rev}, owner_expect=200)]},
        "revision-scan-override": {
            "post": [Call({"revision_id": rev}, body={"reason": "planted"})]
        },
        "revision-outcomes": {
            "post": [Call({"revision_id": rev}, body={"outcome": "success"}, owner_expect=202)]
        },
        "revision-comments": {
            "get": [Call({"revision_id": rev}, owner_expect=200)],
            "post": [Call({"revision_id": rev}, body={"body": "planted", "line": 1})],
        },
        "revision-execute": {
            "post": [Call({"revision_id": rev}, body={"resource": "scripts/run.py", "args": {}})]
        },
        "import-create": {
            "post": [
                Call(
                    body={
                        "url": "https://github.com/owner/repo/tree/main/skill",
                        "workspace": team,
                    }
                )
            ]
        },
        "export-create": {
            "post": [
                Call(body={"revision_id": rev}),
                Call(body={"skill_id": skill_id}),
                Call(body={"workspace": team}),
            ]
        },
        "job-detail": {"get": [Call({"job_id": v.job.job_id}, owner_expect=200)]},
        "job-download": {"get": [Call({"job_id": v.job.job_id}, owner_expect=200)]},
        "schema": {"get": [Call(expect=200)]},
        "docs": {"get": [Call(expect=200)]},
        "not-found": {"get": [Call(expect=404)]},
    }


def _snapshot(env: Env) -> dict[str, Any]:
    workspaces = [env.team, env.personal]
    return {
        "skills": sorted(
            Skill.objects.filter(workspace__in=workspaces).values_list("skill_id", "status")
        ),
        "revisions": sorted(
            SkillRevision.objects.filter(workspace__in=workspaces).values_list(
                "revision_id", "state", "reviewed_at", "review_comment"
            )
        ),
        "members": sorted(
            Membership.objects.filter(workspace__in=workspaces).values_list(
                "workspace__slug", "user__username", "role"
            )
        ),
        "tokens": sorted(
            ApiToken.objects.filter(user=env.owner).values_list("token_id", "revoked_at")
        ),
        "audit": AuditEntry.objects.filter(workspace__in=workspaces).count(),
        "deliveries": sorted(
            WebhookDelivery.objects.filter(webhook__workspace__in=workspaces).values_list(
                "delivery_id", "state", "attempts"
            )
        ),
        "webhooks": sorted(
            Webhook.objects.filter(workspace__in=workspaces).values_list("webhook_id", "url")
        ),
        "invitations": sorted(
            Invitation.objects.filter(workspace__in=workspaces).values_list(
                "invitation_id", "revoked_at"
            )
        ),
        "jobs": sorted(Job.objects.filter(workspace__in=workspaces).values_list("job_id", "state")),
        "workspaces": sorted(
            Workspace.objects.filter(pk__in=[w.pk for w in workspaces]).values_list(
                "slug",
                "name",
                "kind",
                "cloud_skills_enabled",
                "require_distinct_reviewer",
                "allow_dangerous_scripts",
            )
        ),
        "secrets": sorted(
            WorkspaceSecret.objects.filter(workspace__in=workspaces).values_list(
                "workspace__slug", "name", "ciphertext"
            )
        ),
    }


@pytest.fixture
def victim(env: Env) -> Victim:
    publish(env.member, env.team, slug="deploy", components=(component("r.md", "secret"),))
    published = SkillRevision.objects.get(skill__workspace=env.team, state="published")
    draft = save(env.member, env.team, slug="deploy", instruction_body="next draft").revision
    personal = publish(env.owner, env.personal, slug="private").revision
    token, _ = make_token(env.owner, name="victim")
    workspace_secret_set(
        actor=Actor(user=env.owner), workspace=env.team, name="VICTIM_KEY", value="victim-value"
    )
    job = Job.objects.create(
        workspace=env.team,
        kind=Job.Kind.EXPORT,
        state=Job.State.SUCCEEDED,
        created_by=env.owner,
        output_data=b"PK\x05\x06" + bytes(18),
        output_name="deploy.zip",
    )
    invitation = make_invitation(env.owner, env.team)
    webhook, delivery = make_webhook(env.team)
    return Victim(
        env=env,
        skill=published.skill,
        published=published,
        draft=draft,
        personal_skill=personal.skill,
        token=token,
        member_username=env.member.username,
        job=job,
        invitation_id=invitation.invitation_id,
        webhook=webhook,
        delivery=delivery,
    )


def _call(api: Api, name: str, method: str, call: Call) -> Any:
    path = reverse(f"api:{name}", kwargs=call.kwargs) if name != "not-found" else "/v1/nowhere"
    if method == "get":
        return api.get(path, call.query)
    sender: Callable[..., Any] = getattr(api, method)
    if method == "delete":
        return sender(path)
    return sender(path, call.body)


def test_every_pattern_has_an_isolation_case(victim: Victim) -> None:
    cases = _cases(victim)
    missing = [
        f"{name} {method.upper()}"
        for name, pattern in api_patterns()
        for method in methods_of(pattern)
        if method not in cases.get(name, {}) or not cases[name][method]
    ]
    assert not missing, f"API endpoints without a tenant-isolation case: {missing}"
    unknown = set(cases) - {name for name, _ in api_patterns()}
    assert not unknown, f"cases for patterns that no longer exist: {unknown}"


def test_a_stranger_gets_404_everywhere_and_changes_nothing(
    victim: Victim, api_for: ApiFactory
) -> None:
    env = victim.env
    stranger = api_for(env.outsider)
    save(env.outsider, personal_ws(env.outsider), slug="deploy")  # the stranger has a "deploy" too
    before = _snapshot(env)
    cases = _cases(victim)
    checked = 0
    for name, pattern in api_patterns():
        for method in methods_of(pattern):
            for call in cases[name][method]:
                response = _call(stranger, name, method, call)
                label = f"{method.upper()} {name} {call.kwargs} {call.query}"
                assert response.status_code == call.expect, (label, response.content[:300])
                if response.status_code == 404 and name not in PUBLIC:
                    assert response.json()["error"]["code"] == "NOT_FOUND", label
                for secret in call.absent:
                    assert secret not in response.content.decode(), (label, secret)
                checked += 1
    assert checked >= 40
    assert _snapshot(env) == before


def test_the_owner_can_read_what_the_stranger_cannot(victim: Victim, api_for: ApiFactory) -> None:
    """Positive control: the 404s above are about tenancy, not broken fixtures."""
    owner = api_for(victim.env.owner)
    cases = _cases(victim)
    controls = 0
    for name, pattern in api_patterns():
        for method in methods_of(pattern):
            for call in cases[name][method]:
                if call.owner_expect is None:
                    continue
                response = _call(owner, name, method, call)
                assert response.status_code == call.owner_expect, (
                    name,
                    call,
                    response.content[:300],
                )
                controls += 1
    assert controls >= 12


def test_every_endpoint_refuses_a_revoked_token(victim: Victim) -> None:
    env = victim.env
    token, secret = make_token(env.owner, name="revoked")
    ApiToken.objects.filter(pk=token.pk).update(revoked_at=timezone.now())
    from django.test import Client

    revoked = Api(Client(), secret)
    cases = _cases(victim)
    for name, pattern in api_patterns():
        if name in PUBLIC:
            continue
        for method in methods_of(pattern):
            call = cases[name][method][0]
            response = _call(revoked, name, method, call)
            assert response.status_code == 401, (name, method, response.content[:200])
            assert response.json()["error"]["code"] == "AUTHENTICATION_REQUIRED"
