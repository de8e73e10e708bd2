"""Trigger checks (docs/contract.md §22): through Level 0 itself, with a proposal standing in
for its skill, over the skills a team of 20 serves."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from skills_app.access import Actor
from skills_app.domain.bundle import ComponentData
from skills_app.models import SkillRevision, Workspace
from skills_app.selectors.evals import evaluation_answer
from skills_app.selectors.search import search_skills, semantic
from skills_app.services.embeddings import embeddings_catch_up
from skills_app.services.evals import evals_refresh, evaluation_compute
from tests.factories import Env, actor_for, let_authors_approve, make_token, publish, save

TOPICS = [
    ("deploy-web", "Deploy the web app", "Ship a release of the web application to production."),
    ("rotate-keys", "Rotate API keys", "Replace expiring API keys and secrets safely."),
    ("triage-alerts", "Triage alerts", "Decide which paging alerts need a human now."),
    ("write-changelog", "Write the changelog", "Summarise merged pull requests for a release."),
    ("onboard-hire", "Onboard a new hire", "Accounts, laptop and first-week checklist."),
    ("review-pr", "Review a pull request", "Read a diff for bugs, tests and naming."),
    ("scale-workers", "Scale the workers", "Add or remove queue workers under load."),
    ("renew-certs", "Renew TLS certificates", "Renew and install expiring TLS certificates."),
    ("plan-sprint", "Plan a sprint", "Pick stories for the next two weeks."),
    ("invoice-client", "Invoice a client", "Send the monthly invoice with hours worked."),
    ("clean-logs", "Clean old logs", "Delete log files older than thirty days."),
    ("tune-queries", "Tune slow queries", "Find and index the slowest SQL statements."),
    ("reset-password", "Reset a password", "Help a user who is locked out of the account."),
    ("translate-docs", "Translate the docs", "Translate user documentation into Spanish."),
    ("budget-cloud", "Cloud budget", "Check this month's cloud spend against the budget."),
    ("incident-report", "Incident report", "Write the postmortem after an outage."),
    ("backup-files", "Back up files", "Copy the shared drive to cold storage each night."),
]
RESTORE_TASKS = [
    "restore the postgres database from last night's backup",
    "bring back the deleted database rows from a dump",
    "recover a postgres database after disk corruption",
]
MIGRATE_TASKS = [
    "migrate the database schema to the new version",
    "run the pending schema migrations before the release",
]


def _triggers(should: list[str], should_not: list[str] | None = None) -> ComponentData:
    content = {"should_trigger": should, "should_not_trigger": should_not or []}
    return ComponentData(
        "evals/triggers.json", "document", json.dumps(content).encode(), "application/json"
    )


@pytest.fixture(autouse=True)
def fresh_indexes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(semantic, "CHECK_SECONDS", 0.0)
    semantic.clear_cache()
    yield
    semantic.clear_cache()


@pytest.fixture
def team(env: Env) -> Workspace:
    """A team serving 20 skills: 17 others, db-restore and db-migrate with trigger sets."""
    let_authors_approve(env.team)
    for slug, name, description in TOPICS:
        publish(
            env.owner,
            env.team,
            slug=slug,
            name=name,
            description=description,
            instruction_body=f"# {name}\n\n{description}\n",
            components=(),
        )
    publish(
        env.owner,
        env.team,
        slug="db-restore",
        name="Restore a database",
        description="Restore a postgres database from a backup dump after data loss.",
        instruction_body="# Restore\n\nFind the latest dump, restore it, check the rows.\n",
        components=(_triggers(RESTORE_TASKS, ["plan the next sprint"]),),
    )
    publish(
        env.owner,
        env.team,
        slug="db-migrate",
        name="Migrate a database schema",
        description="Run database schema migrations safely before a release.",
        instruction_body="# Migrate\n\nBack up, run the migrations, verify.\n",
        components=(_triggers(MIGRATE_TASKS),),
    )
    embeddings_catch_up(workspace=env.team)
    return env.team


def _propose(env: Env, team: Workspace, slug: str, **content: Any) -> SkillRevision:
    return save(env.owner, team, slug=slug, intent="publish", **content).revision


def _served(team: Workspace, slug: str) -> SkillRevision:
    return SkillRevision.objects.get(skill__workspace=team, skill__slug=slug, state="published")


def _agent(env: Env, team: Workspace) -> Actor:
    token, _ = make_token(env.owner, workspace=team)
    return actor_for(env.owner, token=token, via="api")


def test_a_proposal_without_its_task_words_falls_behind_the_served_revision(
    env: Env, team: Workspace
) -> None:
    served = evaluation_compute(revision=_served(team, "db-restore"))
    assert served is not None
    vague = _propose(
        env,
        team,
        "db-restore",
        name="Helper",
        description="Useful steps for the platform team.",
        instruction_body="# Helper\n\nAsk the on-call person.\n",
        components=(_triggers(RESTORE_TASKS, ["plan the next sprint"]),),
    )
    evaluated = evaluation_compute(revision=vague)
    assert evaluated is not None
    was, now = served.figures, evaluated.figures
    assert was["hits_at_1"] == 3
    assert now["hits_at_1"] < was["hits_at_1"]
    assert now["recall_at_1"] < was["recall_at_1"]
    losing = [t for t in now["tasks"] if t["expected"] == "trigger" and t["rank"] != 1]
    assert losing
    assert all(t["winner"] != "db-restore" for t in losing)


def test_a_proposal_that_steals_another_skills_tasks_lists_the_collision(
    env: Env, team: Workspace
) -> None:
    thief = _propose(
        env,
        team,
        "db-restore",
        name="Restore and migrate a database",
        description="Restore a postgres database, and migrate the database schema to a new "
        "version: run the pending schema migrations before the release.",
        instruction_body="# Restore and migrate\n",
        components=(_triggers(RESTORE_TASKS),),
    )
    evaluated = evaluation_compute(revision=thief)
    assert evaluated is not None
    wins = {c["slug"]: c["tasks"] for c in evaluated.figures["collisions"]["wins_from"]}
    assert "db-migrate" in wins
    assert set(wins["db-migrate"]) <= set(MIGRATE_TASKS)
    # db-migrate's own checks, against what is served, list db-restore as outranking it only
    # once the thief is served.
    migrate = evaluation_compute(revision=_served(team, "db-migrate"))
    assert migrate is not None
    assert "db-restore" not in {c["slug"] for c in migrate.figures["collisions"]["outranked_by"]}


def test_the_ranks_are_what_level_0_answers_once_the_revision_is_served(
    env: Env, team: Workspace
) -> None:
    proposal = _propose(
        env,
        team,
        "db-restore",
        name="Restore a database from a dump",
        description="Bring a postgres database back from a dump; check rows after.",
        instruction_body="# Restore\n\nLoad the dump.\n",
        components=(_triggers(RESTORE_TASKS, ["rotate the API keys"]),),
    )
    evaluated = evaluation_compute(revision=proposal)
    assert evaluated is not None
    from skills_app.services.skills import revision_transition

    revision_transition(actor=actor_for(env.owner), revision=proposal, action="approve")
    embeddings_catch_up(workspace=team)
    agent = _agent(env, team)
    for task in evaluated.figures["tasks"]:
        answer = [
            h["slug"]
            for h in search_skills(actor=agent, text=task["task"], workspace=team, limit=10)
        ]
        rank = answer.index("db-restore") + 1 if "db-restore" in answer else None
        assert (task["rank"], task["winner"]) == (rank, answer[0] if answer else None), task


def test_same_served_set_same_figures_and_a_published_collision_changes_them(
    env: Env, team: Workspace
) -> None:
    restore = _served(team, "db-restore")
    first = evaluation_compute(revision=restore)
    assert first is not None
    figures, digest = first.figures, first.served_set
    again = evaluation_compute(revision=restore)
    assert again is not None
    assert (again.figures, again.served_set) == (figures, digest)
    assert evals_refresh(workspace_pk=team.pk) == 1  # db-migrate's, never computed; not restore's
    publish(
        env.owner,
        team,
        slug="restore-rows",
        name="Restore deleted rows from a database dump",
        description="Restore the postgres database or bring back deleted rows from last "
        "night's backup dump after corruption.",
        instruction_body="# Rows\n",
        components=(),
    )
    embeddings_catch_up(workspace=team)
    answer = evaluation_answer(revision=restore)
    assert answer["served_set"]["current"] is False
    assert evals_refresh(workspace_pk=team.pk) == 2
    restore.refresh_from_db()
    changed = restore.evaluation
    assert changed.served_set != digest
    assert changed.figures != figures
    assert "restore-rows" in {c["slug"] for c in changed.figures["collisions"]["outranked_by"]}


def test_revision_evaluated_is_sent_when_the_figures_change(env: Env, team: Workspace) -> None:
    from skills_app.infra.crypto import secret_encrypt
    from skills_app.models import Webhook, WebhookDelivery

    Webhook.objects.create(
        workspace=team,
        url="https://hooks.example/x",
        events=["revision.evaluated"],
        secret_ciphertext=secret_encrypt("whsec_s"),
    )
    restore = _served(team, "db-restore")
    evaluation_compute(revision=restore)
    evaluation_compute(revision=restore)  # the same figures: nothing new to say
    sent = list(WebhookDelivery.objects.filter(event_type="revision.evaluated"))
    assert len(sent) == 1
    data = sent[0].payload["data"]
    assert data["skill_id"] == restore.skill.skill_id
    assert (data["revision_id"], data["revision_number"]) == (restore.revision_id, 1)
    assert data["slug"] == "db-restore"
    assert data["state"] == "published"
    assert data["recall_at_1"] == 1.0
    assert set(data["collisions"]) == {"outranked_by", "wins_from"}
