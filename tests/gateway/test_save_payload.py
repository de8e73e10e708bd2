"""A save from its JSON body (docs/contract.md §6): read at the door → stored → the answer."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from skills_app import errors
from skills_app.access import Actor
from skills_app.gateway.save_payload import save_payload_read
from skills_app.gateway.shapes import save_as_dict
from skills_app.models import SkillComponent, SkillRevision
from skills_app.services.save import SaveOutcome, save_from_payload
from tests.factories import Env, make_token

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(64))


def _save(*, actor: Actor, payload: Any, source: str = SkillRevision.Source.API) -> SaveOutcome:
    """The save as both doors run it: the payload read at the door, then the service."""
    read = save_payload_read(actor=actor, payload=payload, source=source)
    return save_from_payload(actor=actor, read=read)


def _answer(**kwargs: Any) -> Any:
    """The save's answer as the doors send it."""
    return save_as_dict(_save(**kwargs))


def _payload(workspace: str, **overrides: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "workspace": workspace,
        "slug": "release",
        "name": "Release",
        "description": "How to ship.",
        "instruction_body": "# Ship\n",
    }
    payload.update(overrides)
    return payload


def _token_actor(env: Env, scopes: list[str]) -> Actor:
    return Actor(user=env.owner, token=make_token(env.owner, scopes)[0], via="api")


def _refused(actor: Actor, payload: Any) -> errors.XmemoError:
    before = SkillRevision.objects.count()
    with pytest.raises(errors.XmemoError) as refused:
        _save(actor=actor, payload=payload)
    assert SkillRevision.objects.count() == before
    return refused.value


def test_a_save_stores_the_components_and_answers_like_spec(env: Env) -> None:
    actor = Actor(user=env.owner, via="api")
    answer = _answer(
        actor=actor,
        payload=_payload(
            env.personal.slug,
            frontmatter={"license": "MIT"},
            components=[
                {"logical_path": "ref/a.md", "type": "reference", "content": "héllo"},
                {
                    "logical_path": "img/logo.png",
                    "type": "artifact",
                    "content": base64.b64encode(PNG).decode(),
                    "encoding": "base64",
                },
            ],
            intent="publish",
            message="first",
        ),
        source=SkillRevision.Source.MCP,
    )
    revision = SkillRevision.objects.get(revision_id=answer["revision_id"])
    assert answer == {
        "skill_id": revision.skill.skill_id,
        "revision_id": revision.revision_id,
        "revision_number": 1,
        "state": "published",
        "canonical_hash": revision.canonical_hash,
        "created": True,
        # The lint's advice (docs/contract.md §17): "How to ship." does not say when.
        "warnings": [
            {
                "code": "DESCRIPTION_WITHOUT_WHEN",
                "field": "description",
                "message": answer["warnings"][0]["message"],
            }
        ],
    }
    assert (revision.source, revision.message, revision.frontmatter) == (
        "mcp",
        "first",
        {"license": "MIT"},
    )
    components = {
        c.logical_path: c
        for c in SkillComponent.objects.filter(revision=revision).select_related("blob")
    }
    assert bytes(components["ref/a.md"].blob.data) == "héllo".encode()
    assert bytes(components["img/logo.png"].blob.data) == PNG
    assert (components["ref/a.md"].media_type, components["img/logo.png"].media_type) == (
        "text/markdown",
        "image/png",
    )


def test_omitted_components_carry_over_and_identical_content_creates_nothing(env: Env) -> None:
    actor = Actor(user=env.owner, via="api")
    components = [{"logical_path": "a.md", "type": "reference", "content": "A"}]
    first = _answer(actor=actor, payload=_payload(env.personal.slug, components=components))
    same = _answer(actor=actor, payload=_payload(env.personal.slug, base_revision_id=""))
    assert same == {**first, "created": False}
    second = _answer(actor=actor, payload=_payload(env.personal.slug, instruction_body="# v2\n"))
    revision = SkillRevision.objects.get(revision_id=second["revision_id"])
    assert second["revision_number"] == 2
    assert list(revision.components.values_list("logical_path", flat=True)) == ["a.md"]


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        (["not", "an", "object"], "payload"),
        ({"slug": "x"}, "workspace"),
        (_payload("w", body="typo"), "body"),
        (_payload("w", name=5), "name"),
        (_payload("w", frontmatter=["a"]), "frontmatter"),
        (_payload("w", frontmatter={"k": "a\x00b"}), "frontmatter.k"),
        (_payload("w", instruction_body="a\x00b"), "instruction_body"),
        (_payload("w", components={"a.md": "x"}), "components"),
        (_payload("w", components=["a.md"]), "components[0]"),
        (
            _payload("w", components=[{"type": "reference", "content": ""}]),
            "components[0].logical_path",
        ),
        (
            _payload("w", components=[{"logical_path": "a", "type": "reference", "content": 1}]),
            "components[0].content",
        ),
        (
            _payload(
                "w",
                components=[
                    {"logical_path": "a", "type": "reference", "content": "", "encoding": "hex"}
                ],
            ),
            "components[0].encoding",
        ),
        (
            _payload(
                "w",
                components=[
                    {
                        "logical_path": "a",
                        "type": "reference",
                        "content": "!!",
                        "encoding": "base64",
                    }
                ],
            ),
            "components[0].content",
        ),
        (
            _payload(
                "w",
                components=[{"logical_path": "a", "type": "reference", "content": "", "size": 1}],
            ),
            "components[0].size",
        ),
        (_payload("w", intent=None), "intent"),
        (_payload("w", message=None), "message"),
    ],
)
def test_a_payload_of_the_wrong_shape_names_the_field(env: Env, payload: Any, field: str) -> None:
    error = _refused(Actor(user=env.owner, via="api"), payload)
    assert isinstance(error, errors.ValidationFailed)
    assert error.details == {"field": field}


def test_the_write_scope_is_checked_before_the_workspace_is_looked_up(env: Env) -> None:
    error = _refused(_token_actor(env, ["skills:read"]), _payload("someone-elses"))
    assert error.code == "PERMISSION_DENIED"


def test_a_workspace_the_caller_cannot_read_is_not_found(env: Env) -> None:
    outsider = Actor(user=env.outsider, via="api")
    assert _refused(outsider, _payload(env.team.slug)).code == "NOT_FOUND"
    restricted = Actor(
        user=env.owner,
        token=make_token(env.owner, ["skills:write"], workspace=env.personal)[0],
        via="api",
    )
    assert _refused(restricted, _payload(env.team.slug)).code == "NOT_FOUND"
