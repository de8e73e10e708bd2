"""Reads of one skill the console and the API share: the timeline, the manifest, one
component, and the skills of a workspace as choices."""

from __future__ import annotations

from typing import Any

import pytest

from skills_app import errors
from skills_app.access import revision_for, skill_for
from skills_app.domain.bundle import ComponentEntry
from skills_app.selectors.skills import (
    revision_component,
    revision_components,
    revision_timeline,
    skill_choices,
)
from tests.factories import Env, actor_for, component, make_token, publish, save

pytestmark = pytest.mark.django_db


def test_the_timeline_is_every_revision_newest_first_with_its_people(
    env: Env, django_assert_num_queries: Any
) -> None:
    first = publish(env.owner, env.team, slug="timeline").revision
    second = save(env.member, env.team, slug="timeline", instruction_body="v2").revision
    save(env.owner, env.team, slug="other")
    actor = actor_for(env.member)
    rows = revision_timeline(actor=actor, skill=skill_for(actor, second.skill.skill_id))
    assert [(r.revision_id, r.revision_number) for r in rows] == [
        (second.revision_id, 2),
        (first.revision_id, 1),
    ]
    with django_assert_num_queries(0):  # author and reviewer come with the rows
        people = [(r.author, r.reviewed_by) for r in rows]
    assert people == [(env.member, None), (env.owner, env.admin)]


def test_the_timeline_of_a_skill_the_actor_cannot_read_is_empty(env: Env) -> None:
    revision = save(env.owner, env.team, slug="hidden").revision
    assert revision_timeline(actor=actor_for(env.outsider), skill=revision.skill) == []


def test_the_manifest_is_by_path_and_carries_no_bytes(env: Env) -> None:
    revision = save(
        env.owner,
        env.personal,
        slug="manifest",
        components=(component("z/last.md", "# z"), component("a.bin", b"\x00\x01", "artifact")),
    ).revision
    entries = revision_components(actor=actor_for(env.owner), revision=revision)
    assert [(e.logical_path, e.type, e.size) for e in entries] == [
        ("a.bin", "artifact", 2),
        ("z/last.md", "reference", 3),
    ]
    assert all(isinstance(e, ComponentEntry) and len(e.content_hash) == 64 for e in entries)


def test_one_component_is_its_bytes_or_not_found(env: Env) -> None:
    revision = save(
        env.owner,
        env.personal,
        slug="one-component",
        components=(component("notes.md", "hello"), component("blob.bin", b"\xff\x00")),
    ).revision
    actor = actor_for(env.owner)
    revision = revision_for(actor, revision.revision_id)
    text = revision_component(actor=actor, revision=revision, logical_path="notes.md")
    assert (text.raw, text.encoding, text.content) == (b"hello", "utf-8", "hello")
    binary = revision_component(actor=actor, revision=revision, logical_path="blob.bin")
    assert (binary.raw, binary.encoding) == (b"\xff\x00", "base64")
    with pytest.raises(errors.NotFound):
        revision_component(actor=actor, revision=revision, logical_path="missing.md")


def test_skill_choices_are_the_workspaces_skills_by_slug(env: Env) -> None:
    b = save(env.owner, env.team, slug="bravo").revision.skill
    a = save(env.member, env.team, slug="alpha").revision.skill
    save(env.owner, env.personal, slug="elsewhere")
    assert skill_choices(actor=actor_for(env.member), workspace=env.team) == [
        (a.skill_id, "alpha"),
        (b.skill_id, "bravo"),
    ]
    assert skill_choices(actor=actor_for(env.outsider), workspace=env.team) == []
    token, _ = make_token(env.owner, ["skills:write"])
    with pytest.raises(errors.PermissionDenied):
        skill_choices(actor=actor_for(env.owner, token=token), workspace=env.team)
