"""Text that is not valid Unicode (lone surrogates) or holds NUL is a 400 naming the field, over
REST and MCP alike, and nothing is stored (docs/contract.md §3)."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import pytest
from django.test import Client

from skills_app import errors
from skills_app.access import Actor
from skills_app.mcp.tools import tool_run
from skills_app.models import SkillComponent, SkillRevision
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env, make_token

SURROGATE = "\ud800"


def _payload(workspace: str) -> dict[str, Any]:
    return {
        "workspace": workspace,
        "slug": "release",
        "name": "Release",
        "description": "How to ship.",
        "instruction_body": "# Ship\n",
    }


# (what to change, the field the answer must name)
CASES: list[tuple[dict[str, Any], str]] = [
    ({"frontmatter": {f"key{SURROGATE}": "v"}}, "frontmatter"),
    ({"frontmatter": {"metadata": {"note": f"a{SURROGATE}"}}}, "frontmatter"),
    (
        {
            "components": [
                {"logical_path": f"references/a{SURROGATE}.md", "type": "reference", "content": "x"}
            ]
        },
        "components[0].logical_path",
    ),
    (
        {"components": [{"logical_path": "a.md", "type": "reference", "content": SURROGATE}]},
        "components[0].content",
    ),
    ({"message": f"fix{SURROGATE}"}, "message"),
    ({"workspace": f"ws{SURROGATE}"}, "workspace"),
    ({"base_revision_id": f"rev_{SURROGATE}"}, "base_revision_id"),
    ({"slug": f"s{SURROGATE}"}, "slug"),
    ({"frontmatter": {"note\x00": "v"}}, "frontmatter"),
]


@pytest.mark.parametrize(("change", "field"), CASES)
def test_rest_save_refuses_unstorable_text_naming_the_field(
    env: Env, api_for: ApiFactory, change: dict[str, Any], field: str
) -> None:
    body = {**_payload(env.personal.slug), **change}
    # json.dumps escapes a lone surrogate as \ud800, which is what a hostile client sends.
    raw = json.dumps(body)
    _, secret = make_token(env.owner)
    answer = Client().post(
        "/v1/skills/save",
        raw,
        content_type="application/json",
        headers={"Authorization": f"Bearer {secret}"},
    )
    assert answer.status_code == 400, answer.content
    assert error_code(answer) == "VALIDATION_ERROR"
    assert answer.json()["error"]["details"]["field"].startswith(field)
    assert not SkillRevision.objects.exists()


@pytest.mark.parametrize(("change", "field"), CASES)
def test_mcp_save_refuses_unstorable_text_naming_the_field(
    env: Env, change: dict[str, Any], field: str
) -> None:
    token, _ = make_token(env.owner, ["skills:read", "skills:write"])
    actor = Actor(user=env.owner, token=token, via="mcp")
    with pytest.raises(errors.ValidationFailed) as refused:
        tool_run(
            name="save_cloud_skill",
            actor=actor,
            arguments={**_payload(env.personal.slug), **change},
        )
    assert refused.value.details["field"].startswith(field)
    assert not SkillRevision.objects.exists()


def test_paths_are_stored_nfc_and_normalization_twins_are_refused(
    env: Env, api_for: ApiFactory
) -> None:
    nfc = unicodedata.normalize("NFC", "references/café.md")
    nfd = unicodedata.normalize("NFD", nfc)
    api = api_for(env.owner)

    def component(path: str) -> dict[str, str]:
        return {"logical_path": path, "type": "reference", "content": path}

    twins = api.post(
        "/v1/skills/save",
        {**_payload(env.personal.slug), "components": [component(nfc), component(nfd)]},
    )
    assert twins.status_code == 400, twins.content
    assert error_code(twins) == "INVALID_PATH"
    hidden = api.post(
        "/v1/skills/save",
        {**_payload(env.personal.slug), "components": [component("scripts/txt.\u202eexe.sh")]},
    )
    assert hidden.status_code == 400, hidden.content
    assert error_code(hidden) == "INVALID_PATH"
    assert not SkillRevision.objects.exists()

    saved = api.post(
        "/v1/skills/save", {**_payload(env.personal.slug), "components": [component(nfd)]}
    )
    assert saved.status_code == 201, saved.content
    stored = SkillComponent.objects.get()
    assert stored.logical_path == nfc
