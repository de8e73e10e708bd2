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


def test_evals_answer_none_then_pending_then_done(env: Env, api_for: ApiFactory) -> None:
    from skills_app.models import SkillRevision
    from skills_app.services.evals import evaluation_compute

    api = api_for(env.owner)
    plain = api.post(SAVE, {**_save_body(env.personal.slug, {}), "components": []}).json()
    assert api.get(f"/v1/revisions/{plain['revision_id']}/evals").json() == {"state": "none"}
    good = {"should_trigger": ["restore the database"], "should_not_trigger": ["deploy"]}
    saved = api.post(SAVE, _save_body(env.personal.slug, good)).json()
    url = f"/v1/revisions/{saved['revision_id']}/evals"
    assert api.get(url).json() == {"state": "pending"}
    evaluation_compute(revision=SkillRevision.objects.get(revision_id=saved["revision_id"]))
    answer = api.get(url).json()
    assert answer["state"] == "done"
    assert answer["recall_at_1"] == 1.0
    assert answer["false_trigger_rate"] == 0.0
    assert answer["tasks"][0] == {
        "task": "restore the database",
        "expected": "trigger",
        "rank": 1,
        "winner": "db-restore",
    }
    assert answer["collisions"] == {"outranked_by": [], "wins_from": []}
    assert answer["served_set"]["current"] is True
    assert api_for(env.outsider).get(url).status_code == 404


def test_outcomes_are_bounded_per_token_per_day_and_notes_stay_text(
    env: Env, api_for: ApiFactory
) -> None:
    from skills_app.models import RevisionOutcome

    saved = api_for(env.owner).post(SAVE, _save_body(env.personal.slug, {})).json()
    url = f"/v1/revisions/{saved['revision_id']}/outcomes"
    agent = api_for(env.owner)
    note = "<script>alert(1)</script> worked"
    first = agent.post(url, {"outcome": "success", "note": note})
    assert first.status_code == 202, first.content
    assert first.json() == {
        "revision_id": saved["revision_id"],
        "outcome": "success",
        "accepted": True,
    }
    assert agent.post(url, {"outcome": "failure"}).status_code == 202
    other = api_for(env.owner)  # another token of the same person counts on its own
    assert other.post(url, {"outcome": "partial"}).status_code == 202
    stored = RevisionOutcome.objects.order_by("pk")
    assert [o.outcome for o in stored] == ["success", "partial"]
    assert stored[0].note == note
    bad = agent.post(url, {"outcome": "great"})
    assert bad.status_code == 400
    assert bad.json()["error"]["details"]["field"] == "outcome"
    assert agent.post(url, {"outcome": "success", "score": 3}).status_code == 400
    assert api_for(env.outsider).post(url, {"outcome": "success"}).status_code == 404


def test_usage_shows_outcome_counts_and_rate_per_revision_and_client(
    env: Env, api_for: ApiFactory
) -> None:
    saved = api_for(env.owner).post(SAVE, _save_body(env.personal.slug, {})).json()
    url = f"/v1/revisions/{saved['revision_id']}/outcomes"
    for outcome in ("success", "success", "failure"):  # three tokens, one report each
        assert api_for(env.owner).post(url, {"outcome": outcome}).status_code == 202
    usage = api_for(env.owner).get(f"/v1/skills/{saved['skill_id']}/usage").json()
    expected = {"success": 2, "partial": 0, "failure": 1, "rate": 0.6667}
    assert usage["by_revision"] == [
        {
            "revision_id": saved["revision_id"],
            "revision_number": 1,
            "level1": 0,
            "level2": 0,
            "outcomes": expected,
        }
    ]
    assert usage["by_client"] == [{"name": "test", "level1": 0, "level2": 0, "outcomes": expected}]


def test_lint_runs_the_trigger_checks_of_an_unsaved_folder(env: Env, api_for: ApiFactory) -> None:
    from tests.factories import publish

    migrate = json.dumps({"should_trigger": ["run the pending schema migrations"]}).encode()
    from skills_app.domain.bundle import ComponentData

    publish(
        env.owner,
        env.personal,
        slug="db-migrate",
        name="Migrate a database schema",
        description="Run database schema migrations before a release.",
        instruction_body="# Migrate\n",
        components=(ComponentData("evals/triggers.json", "document", migrate, "application/json"),),
    )
    api = api_for(env.owner)
    steals = {
        "should_trigger": ["restore the postgres database from a dump"],
        "should_not_trigger": ["plan the sprint"],
    }
    body = _save_body(env.personal.slug, steals)
    body["description"] = (
        "Restore a postgres database from a dump, or run the pending schema migrations."
    )
    answer = api.post("/v1/skills/lint", body).json()
    assert answer["errors"] == []
    checks = answer["triggers"]
    assert checks["recall_at_1"] == 1.0
    assert checks["false_trigger_rate"] == 0.0
    assert checks["collisions"]["wins_from"] == [
        {"slug": "db-migrate", "tasks": ["run the pending schema migrations"]}
    ]
    assert checks["served_set"]["skills"] == 1
    assert not Skill.objects.filter(slug="db-restore").exists()  # nothing stored
    plain = api.post("/v1/skills/lint", {**body, "components": []}).json()
    assert plain["triggers"] is None


def test_lint_with_errors_runs_no_checks(env: Env, api_for: ApiFactory) -> None:
    body = _save_body(env.personal.slug, {"should_trigger": ["restore the database"]})
    body["slug"] = "x" * 80  # refused by the save: never stood in
    answer = api_for(env.owner).post("/v1/skills/lint", body)
    assert answer.status_code == 200, answer.content
    assert answer.json()["errors"]
    assert answer.json()["triggers"] is None
