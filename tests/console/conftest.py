from __future__ import annotations

import pytest
from django.test import Client

from tests.factories import Env, save


@pytest.fixture
def owner_client(env: Env) -> Client:
    client = Client()
    client.force_login(env.owner)
    return client


@pytest.fixture
def member_client(env: Env) -> Client:
    client = Client()
    client.force_login(env.member)
    return client


@pytest.fixture
def proposal(env: Env):
    """A team skill with revision 1 published and revision 2 proposed by a member."""
    first = save(env.member, env.team, slug="deploy", intent="publish")
    from skills_app.access import Actor
    from skills_app.services.skills import revision_transition

    revision_transition(actor=Actor(user=env.owner), revision=first.revision, action="approve")
    return save(
        env.member,
        env.team,
        slug="deploy",
        intent="publish",
        instruction_body="# Deploy\n\nStep one, then step two.\n",
    ).revision
