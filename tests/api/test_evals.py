"""Trigger checks and outcomes over REST (docs/contract.md §22)."""

from __future__ import annotations

import json

from skills_app.models import Skill
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env

SAVE = "/v1/skills/save"


def _save_body(ws: str, triggers: object) -> dict[str, object]:
    return {
        "workspace": ws,
        "slug": "db-restore",
        "name": "Restore a database",
        "description": "Restore a PostgreSQL database from a backup.",
        "instruction_body": "# Restore\n",
        "intent": "draft",
        "components": [
            {
                "logical_path": "evals/triggers.json",
                "type": "document",
                "content": json.dumps(triggers),
            }
        ],
    }


def test_an_invalid_triggers_file_is_refused_at_save_naming_the_field(
    env: Env, api_for: ApiFactory
) -> None:
    api = api_for(env.owner)
    too_many = {"should_trigger": ["restore the database"] * 51}
    response = api.post(SAVE, _save_body(env.personal.slug, too_many))
    assert response.status_code == 400, response.content
    assert error_code(response) == "VALIDATION_ERROR"
    assert response.json()["error"]["details"]["field"] == "should_trigger"
    bad_task = {"should_trigger": ["ok"], "should_not_trigger": ["x" * 501]}
    response = api.post(SAVE, _save_body(env.personal.slug, bad_task))
    assert response.json()["error"]["details"]["field"] == "should_not_trigger"
    assert not Skill.objects.filter(slug="db-restore").exists()
    good = {"should_trigger": ["restore the database"], "should_not_trigger": ["deploy"]}
    assert api.post(SAVE, _save_body(env.personal.slug, good)).status_code == 201
