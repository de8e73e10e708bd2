"""The revision timeline shows labels, with "move label here" for owners and admins (§18)."""

from __future__ import annotations

from django.test import Client
from django.urls import reverse

from skills_app.models import Skill, SkillLabel, SkillRevision
from skills_app.services.skills import revision_transition
from tests.factories import Env, actor_for, publish, save


def _url(name: str, *args: str) -> str:
    return reverse(f"console:{name}", args=args)


def test_owners_move_labels_on_the_timeline_and_members_only_see_them(
    owner_client: Client, member_client: Client, env: Env
) -> None:
    first = publish(env.member, env.team, slug="deploy").revision
    proposal = save(env.member, env.team, slug="deploy", intent="publish", instruction_body="2")
    rejected = revision_transition(
        actor=actor_for(env.owner), revision=proposal.revision, action="reject", comment="no"
    )
    skill = first.skill
    page = _url("skill_detail", env.team.slug, skill.skill_id)
    html = owner_client.get(page).content.decode()
    # One "move label here" per revision a label may point at: not on the rejected one.
    assert html.count('data-action="move-label"') == 1
    assert f'name="revision_id" value="{first.revision_id}"' in html
    assert f'name="revision_id" value="{rejected.revision_id}"' not in html

    moved = owner_client.post(
        _url("skill_label", env.team.slug, skill.skill_id),
        {"name": "production", "revision_id": first.revision_id},
    )
    assert moved.status_code == 302
    label = SkillLabel.objects.get(skill=skill, name="production")
    assert label.revision_id == first.pk
    html = owner_client.get(page).content.decode()
    assert 'data-label="production"' in html
    assert 'data-action="remove-label"' in html

    members_view = member_client.get(page).content.decode()
    assert 'data-label="production"' in members_view
    assert 'data-action="move-label"' not in members_view
    member_client.post(
        _url("skill_label", env.team.slug, skill.skill_id),
        {"name": "production", "remove": "1"},
    )
    assert SkillLabel.objects.filter(skill=skill, name="production").exists()

    # A refusal is a message, not an error page; nothing moves.
    refused = owner_client.post(
        _url("skill_label", env.team.slug, skill.skill_id),
        {"name": "production", "revision_id": rejected.revision_id},
        follow=True,
    )
    assert "rejected" in refused.content.decode()
    assert SkillLabel.objects.get(skill=skill, name="production").revision_id == first.pk
    assert SkillRevision.objects.get(pk=rejected.pk).state == "draft"


def test_a_command_shows_its_badge_and_the_name_clients_show(
    owner_client: Client, member_client: Client, env: Env
) -> None:
    command = {"invoke": {"user": True}}
    publish(env.owner, env.personal, slug="ship", frontmatter=command)
    plain = publish(env.owner, env.personal, slug="plain").revision
    ship = Skill.objects.get(slug="ship")
    html = owner_client.get(_url("skill_detail", env.personal.slug, ship.skill_id)).content.decode()
    assert 'data-testid="command-badge"' in html
    assert "command /ship" in html
    other = owner_client.get(_url("skill_detail", env.personal.slug, plain.skill.skill_id))
    assert 'data-testid="command-badge"' not in other.content.decode()
    # In a team a proposal is no command yet: no badge until it is approved.
    proposal = save(env.member, env.team, slug="cmd", intent="publish", frontmatter=command)
    page = _url("skill_detail", env.team.slug, proposal.revision.skill.skill_id)
    assert 'data-testid="command-badge"' not in member_client.get(page).content.decode()
    revision_transition(actor=actor_for(env.owner), revision=proposal.revision, action="approve")
    assert "command /cmd" in member_client.get(page).content.decode()
