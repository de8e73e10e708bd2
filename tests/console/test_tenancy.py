"""Every console URL answers 404 for objects of a workspace the user is not a member of.

The URL patterns are enumerated from ``skills_app/console/urls.py``: a pattern the filler
below cannot fill fails the test, so a new page cannot slip past it.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, reverse

from skills_app.console import urls as console_urls
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
)
from skills_app.services.jobs import export_start
from tests.factories import Env, actor_for, make_invitation, make_token, make_webhook, save

# Pages outside any workspace: they show only the signed-in user's own things.
NOT_TENANT_SCOPED = {
    "home",
    "login",
    "logout",
    "workspace_new",
    # Sign-up, password reset and the invitation link: public pages, keyed by a secret link.
    "signup",
    "invitation",
    "password_reset",
    "password_reset_done",
    "password_reset_confirm",
    "password_reset_complete",
}


def _patterns() -> list[URLPattern]:
    return [p for p in console_urls.urlpatterns if isinstance(p, URLPattern)]


def _world(env: Env) -> dict[str, Any]:
    """State that a stranger's requests must leave exactly as it was."""
    return {
        "skills": sorted(Skill.objects.values_list("skill_id", "status")),
        "revisions": sorted(SkillRevision.objects.values_list("revision_id", "state")),
        "members": sorted(Membership.objects.values_list("workspace_id", "user_id", "role")),
        "tokens": sorted(ApiToken.objects.values_list("token_id", "revoked_at")),
        "audit": AuditEntry.objects.count(),
        "jobs": Job.objects.count(),
        "invitations": sorted(Invitation.objects.values_list("invitation_id", "revoked_at")),
        "webhooks": sorted(Webhook.objects.values_list("webhook_id", "url")),
        "deliveries": sorted(WebhookDelivery.objects.values_list("delivery_id", "state")),
    }


@pytest.fixture
def victim(env: Env) -> dict[str, str]:
    """Ids of objects in the team workspace, which the outsider is not a member of."""
    published = save(env.member, env.team, slug="deploy", intent="draft")
    proposed = save(env.member, env.team, slug="deploy", intent="publish", instruction_body="v2")
    job = export_start(actor=actor_for(env.owner), revision=published.revision)
    token, _ = make_token(env.owner)
    invitation = make_invitation(env.owner, env.team)
    webhook, delivery = make_webhook(env.team)
    return {
        "ws": env.team.slug,
        "skill_id": proposed.revision.skill.skill_id,
        "revision_id": proposed.revision.revision_id,
        "job_id": job.job_id,
        "path": "templates/t.md",
        "action": "approve",
        "username": env.member.get_username(),
        "token_id": token.token_id,
        "invitation_id": invitation.invitation_id,
        "webhook_id": webhook.webhook_id,
        "delivery_id": delivery.delivery_id,
    }


def test_every_console_page_is_404_for_a_stranger(env: Env, victim: dict[str, str]) -> None:
    client = Client()
    client.force_login(env.outsider)
    before = _world(env)
    checked = []
    for pattern in _patterns():
        name = pattern.name
        assert name, f"console URL {pattern.pattern} has no name"
        if name in NOT_TENANT_SCOPED:
            continue
        converters = pattern.pattern.converters
        unknown = set(converters) - set(victim)
        assert not unknown, f"the tenancy test cannot fill {unknown} of console:{name}"
        url = reverse(f"console:{name}", kwargs={key: victim[key] for key in converters})
        for method in ("get", "post"):
            response = getattr(client, method)(url)
            assert response.status_code == 404, (method, url, response.status_code)
            assert b"belongs to a workspace you are not a member of" in response.content
        checked.append(name)
    assert _world(env) == before
    assert len(checked) == len(_patterns()) - len(NOT_TENANT_SCOPED)


def test_objects_answer_only_under_their_own_workspace(env: Env, victim: dict[str, str]) -> None:
    """The owner is a member of both workspaces; a team skill under the personal URL is a 404."""
    client = Client()
    client.force_login(env.owner)
    personal = env.personal.slug
    own = reverse("console:skill_detail", args=[env.team.slug, victim["skill_id"]])
    wrong = reverse("console:skill_detail", args=[personal, victim["skill_id"]])
    assert client.get(own).status_code == 200
    assert client.get(wrong).status_code == 404
    review = reverse("console:review", args=[personal, victim["revision_id"]])
    assert client.get(review).status_code == 404
    job = reverse("console:job_detail", args=[personal, victim["job_id"]])
    assert client.get(job).status_code == 404


def test_stranger_tokens_cannot_be_revoked_from_own_workspace(
    env: Env, victim: dict[str, str]
) -> None:
    client = Client()
    client.force_login(env.outsider)
    url = reverse("console:token_revoke", args=[env.outsider.get_username(), victim["token_id"]])
    assert client.post(url).status_code == 404
    assert ApiToken.objects.get(token_id=victim["token_id"]).revoked_at is None
