"""POST /v1/skills/save — docs/contract.md §6."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from skills_app.models import AuditEntry, Skill, SkillComponent, SkillRevision
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env

SAVE = "/v1/skills/save"
SAVE_FIELDS = {
    "skill_id",
    "revision_id",
    "revision_number",
    "state",
    "canonical_hash",
    "created",
    "warnings",
}


def body(env_ws: str, **overrides: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "workspace": env_ws,
        "slug": "deploy",
        "name": "Deploy runbook",
        "description": "How to deploy safely.",
        "instruction_body": "# Deploy\n\nStep one.\n",
        "intent": "draft",
    }
    values.update(overrides)
    return values


def test_first_save_creates_the_skill_and_answers_201(env: Env, api_for: ApiFactory) -> None:
    response = api_for(env.owner).post(
        SAVE,
        body(
            env.personal.slug,
            frontmatter={"license": "MIT"},
            components=[
                {"logical_path": "refs/a.md", "type": "reference", "content": "# A\n"},
                {
                    "logical_path": "assets/x.bin",
                    "type": "artifact",
                    "content": base64.b64encode(b"\x00\x01\xff").decode(),
                    "encoding": "base64",
                },
            ],
            message="first",
        ),
    )
    assert response.status_code == 201, response.content
    data = response.json()
    assert set(data) == SAVE_FIELDS
    rev = SkillRevision.objects.get(revision_id=data["revision_id"])
    assert data == {
        "skill_id": rev.skill.skill_id,
        "revision_id": rev.revision_id,
        "revision_number": 1,
        "state": "draft",
        "canonical_hash": rev.canonical_hash,
        "created": True,
        # "Deploy runbook" does not name the folder "deploy"; "How to deploy safely." says no when.
        "warnings": [
            {"code": "NAME_NOT_FOLDER", "field": "name", "message": data["warnings"][0]["message"]},
            {
                "code": "DESCRIPTION_WITHOUT_WHEN",
                "field": "description",
                "message": data["warnings"][1]["message"],
            },
        ],
    }
    assert rev.source == "api"
    assert rev.message == "first"
    assert rev.frontmatter == {"license": "MIT"}
    comps = {
        c.logical_path: c
        for c in SkillComponent.objects.filter(revision=rev).select_related("blob")
    }
    assert bytes(comps["assets/x.bin"].blob.data) == b"\x00\x01\xff"
    assert comps["refs/a.md"].media_type == "text/markdown"
    assert comps["assets/x.bin"].media_type == "application/octet-stream"
    entry = AuditEntry.objects.get(action="skills.revision.create", target_id=rev.revision_id)
    assert entry.via == "api"
    assert entry.actor_label == env.owner.username


def test_identical_content_answers_200_created_false(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    first = api.post(SAVE, body(env.personal.slug)).json()
    again = api.post(SAVE, body(env.personal.slug))
    assert again.status_code == 200
    assert again.json() == {**first, "created": False}
    published = api.post(SAVE, body(env.personal.slug, intent="publish"))
    assert published.status_code == 200
    assert published.json()["state"] == "published"
    assert published.json()["revision_id"] == first["revision_id"]


def test_publish_intent_publishes_in_personal_and_proposes_in_team(
    env: Env, api_for: ApiFactory
) -> None:
    personal = api_for(env.owner).post(SAVE, body(env.personal.slug, intent="publish")).json()
    assert personal["state"] == "published"
    team = api_for(env.member).post(SAVE, body(env.team.slug, intent="publish")).json()
    assert team["state"] == "proposed"


def test_omitted_components_carry_over_and_empty_list_clears(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    api.post(
        SAVE,
        body(
            env.personal.slug,
            components=[{"logical_path": "r.md", "type": "reference", "content": "x"}],
        ),
    )
    carried = api.post(SAVE, body(env.personal.slug, instruction_body="v2")).json()
    rev2 = SkillRevision.objects.get(revision_id=carried["revision_id"])
    assert list(rev2.components.values_list("logical_path", flat=True)) == ["r.md"]
    cleared = api.post(SAVE, body(env.personal.slug, instruction_body="v3", components=[])).json()
    rev3 = SkillRevision.objects.get(revision_id=cleared["revision_id"])
    assert rev3.components.count() == 0


def test_base_revision_id_gives_optimistic_concurrency(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    first = api.post(SAVE, body(env.personal.slug)).json()
    ok = api.post(
        SAVE, body(env.personal.slug, instruction_body="v2", base_revision_id=first["revision_id"])
    )
    assert ok.status_code == 201
    stale = api.post(
        SAVE, body(env.personal.slug, instruction_body="v3", base_revision_id=first["revision_id"])
    )
    assert stale.status_code == 409
    assert error_code(stale) == "CONFLICT"
    assert stale.json()["error"]["details"]["latest_revision_id"] == ok.json()["revision_id"]
    assert SkillRevision.objects.count() == 2


@pytest.mark.parametrize(
    ("overrides", "status", "code"),
    [
        ({"instruction_body": "x" * 65_537}, 413, "BODY_TOO_LARGE"),
        (
            {
                "components": [
                    {"logical_path": "big.md", "type": "reference", "content": "x" * 131_073}
                ]
            },
            413,
            "COMPONENT_TOO_LARGE",
        ),
        (
            {
                "components": [
                    {"logical_path": f"r{i}.md", "type": "reference", "content": "x"}
                    for i in range(51)
                ]
            },
            400,
            "TOO_MANY_COMPONENTS",
        ),
        (
            {"components": [{"logical_path": "../x.md", "type": "reference", "content": "x"}]},
            400,
            "INVALID_PATH",
        ),
        (
            {
                "components": [
                    {"logical_path": "a.md", "type": "reference", "content": "x"},
                    {"logical_path": "A.md", "type": "reference", "content": "y"},
                ]
            },
            400,
            "INVALID_PATH",
        ),
        (
            {
                "components": [
                    {
                        "logical_path": "a.bin",
                        "type": "artifact",
                        "content": "!!",
                        "encoding": "base64",
                    }
                ]
            },
            400,
            "VALIDATION_ERROR",
        ),
        (
            {"components": [{"logical_path": "a", "type": "bogus", "content": "x"}]},
            400,
            "VALIDATION_ERROR",
        ),
        ({"slug": "Bad Slug"}, 400, "VALIDATION_ERROR"),
        ({"name": ""}, 400, "VALIDATION_ERROR"),
        ({"name": "n" * 201}, 400, "VALIDATION_ERROR"),
        ({"description": "d" * 1025}, 400, "VALIDATION_ERROR"),
        ({"intent": "yolo"}, 400, "VALIDATION_ERROR"),
        ({"frontmatter": {"max-iterations": "many"}}, 400, "VALIDATION_ERROR"),
        ({"frontmatter": {"k": "nul\x00"}}, 400, "VALIDATION_ERROR"),
        ({"frontmatter": ["not", "a", "mapping"]}, 400, "VALIDATION_ERROR"),
        ({"instruction_body": "nul\x00byte"}, 400, "VALIDATION_ERROR"),
        ({"message": "m" * 2001}, 400, "VALIDATION_ERROR"),
    ],
)
def test_invalid_saves_store_nothing(
    env: Env, api_for: ApiFactory, overrides: dict[str, Any], status: int, code: str
) -> None:
    response = api_for(env.owner).post(SAVE, body(env.personal.slug, **overrides))
    assert response.status_code == status, response.content
    assert error_code(response) == code
    assert Skill.objects.count() == 0
    assert SkillRevision.objects.count() == 0


def test_missing_fields_name_the_field(env: Env, api_for: ApiFactory) -> None:
    payload = body(env.personal.slug)
    del payload["name"]
    response = api_for(env.owner).post(SAVE, payload)
    assert response.status_code == 400
    assert error_code(response) == "VALIDATION_ERROR"
    assert response.json()["error"]["details"]["field"] == "name"
    assert "name" in response.json()["error"]["message"]


def test_save_needs_write_scope_and_membership(env: Env, api_for: ApiFactory) -> None:
    read_only = api_for(env.owner, scopes=["skills:read"]).post(SAVE, body(env.personal.slug))
    assert read_only.status_code == 403
    assert error_code(read_only) == "PERMISSION_DENIED"
    stranger = api_for(env.outsider).post(SAVE, body(env.team.slug))
    assert stranger.status_code == 404
    assert error_code(stranger) == "NOT_FOUND"
    assert SkillRevision.objects.count() == 0


def test_save_into_a_disabled_workspace_is_feature_disabled(env: Env, api_for: ApiFactory) -> None:
    env.team.cloud_skills_enabled = False
    env.team.save()
    response = api_for(env.owner).post(SAVE, body(env.team.slug))
    assert response.status_code == 403
    assert error_code(response) == "FEATURE_DISABLED"


def test_non_object_json_bodies_are_validation_errors(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    payloads: list[Any] = [[], "text", 3, None]
    for payload in payloads:
        response = api.client.post(
            SAVE,
            data=__import__("json").dumps(payload),
            content_type="application/json",
            headers={"Authorization": f"Bearer {api.secret}"},
        )
        assert response.status_code == 400, payload
        assert error_code(response) == "VALIDATION_ERROR"
