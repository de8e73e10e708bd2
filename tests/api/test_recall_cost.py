"""Know the cost before loading (docs/contract.md §5): Level 0 hits and the Level 1 answer carry
``approx_tokens``, an estimate of what Level 1 loads, computed once per (immutable) revision."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

from skills_app.domain.context_cost import revision_tokens, text_tokens
from skills_app.models import SkillRevision
from tests.api.conftest import Api, ApiFactory
from tests.factories import Env, component, publish, save
from tests.support import require_service, run_on_fresh_sqlite

RECALL = "/v1/recall"
LONG_BODY = "# Deploy\n\n" + "Run the canary, watch the error rate, then roll forward.\n" * 60


@pytest.fixture
def pg(db: None) -> None:
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")


def _hit(api: Api, query: str, slug: str) -> dict[str, Any]:
    response = api.get(RECALL, {"query": query})
    assert response.status_code == 200, response.content
    hits = [hit for hit in response.json()["data"]["results"] if hit["slug"] == slug]
    assert len(hits) == 1, response.json()
    return hits[0]


def _root(api: Api, **params: str) -> dict[str, Any]:
    response = api.get(RECALL, params)
    assert response.status_code == 200, response.content
    data: dict[str, Any] = response.json()["data"]
    return data


def test_level0_hits_and_level1_answers_carry_the_same_estimate(
    pg: None, env: Env, api_for: ApiFactory
) -> None:
    # Personal, published, with a bigger draft on top: both levels describe the published one.
    publish(env.owner, env.personal, slug="alpha-deploy", name="Alpha deploy")
    save(
        env.owner,
        env.personal,
        slug="alpha-deploy",
        name="Alpha deploy",
        instruction_body=LONG_BODY,
    )
    # Personal, draft only: Level 1 falls back to it, and Level 0 describes that one.
    save(
        env.owner, env.personal, slug="beta-deploy", name="Beta deploy", instruction_body=LONG_BODY
    )
    # Team, published, with a much bigger proposal pending: the proposal is never what either
    # level describes.
    publish(env.member, env.team, slug="gamma-deploy", name="Gamma deploy")
    proposal = save(
        env.member,
        env.team,
        slug="gamma-deploy",
        name="Gamma deploy",
        intent="publish",
        instruction_body=LONG_BODY * 3,
    ).revision
    assert proposal.state == "proposed"
    api = api_for(env.owner)
    expected = {
        "alpha-deploy": "published",
        "beta-deploy": "latest_fallback",
        "gamma-deploy": "published",
    }
    for slug, resolved_by in expected.items():
        hit = _hit(api, slug.replace("-", " "), slug)
        root = _root(api, slug=slug)
        assert root["resolved_by"] == resolved_by
        assert type(hit["approx_tokens"]) is int
        assert type(root["approx_tokens"]) is int
        assert hit["approx_tokens"] == root["approx_tokens"] > 0, slug
    pinned = _root(api, slug="gamma-deploy", revision_id=proposal.revision_id)
    assert pinned["approx_tokens"] > 3 * _root(api, slug="gamma-deploy")["approx_tokens"]
    # The field comes last in both shapes: every existing field keeps its place.
    response = api.get(RECALL, {"query": "alpha deploy"})
    assert list(response.json()["data"]["results"][0])[-2:] == ["score", "approx_tokens"]
    assert list(_root(api, slug="alpha-deploy"))[-2:] == ["scan", "approx_tokens"]


def test_the_estimate_describes_the_level1_answer(pg: None, env: Env, api_for: ApiFactory) -> None:
    publish(
        env.owner,
        env.personal,
        slug="deploy",
        name="Déploiement 🚀",
        frontmatter={"license": "MIT", "metadata": {"team": "ops", "tags": ["k8s", "日本"]}},
        instruction_body=LONG_BODY,
        components=(
            component("references/guide.md", "# Guide\n" + "x" * 5000),
            component("templates/t.md", "# T\n", "template"),
        ),
    )
    response = api_for(env.owner).get(RECALL, {"slug": "deploy"})
    data = response.json()["data"]
    # What it counts: name, description, frontmatter, body and the resource manifest, as sent.
    assert data["approx_tokens"] == revision_tokens(
        name=data["name"],
        description=data["description"],
        frontmatter=data["frontmatter"],
        instruction_body=data["instruction_body"],
        resources=[tuple(r.values()) for r in data["resources"]],
    )
    # …which is the heuristic applied to the whole answer, give or take its identifiers.
    whole = text_tokens(response.content.decode("utf-8"))
    assert abs(data["approx_tokens"] - whole) <= 0.05 * whole, (data["approx_tokens"], whole)
    # Component contents are Level 2: the 5,000-character reference is not counted.
    assert data["approx_tokens"] < text_tokens(LONG_BODY) + 300


def test_a_bigger_body_gives_a_bigger_estimate(pg: None, env: Env, api_for: ApiFactory) -> None:
    publish(env.owner, env.personal, slug="short-canary", name="Canary short")
    publish(
        env.owner, env.personal, slug="long-canary", name="Canary long", instruction_body=LONG_BODY
    )
    api = api_for(env.owner)
    short, long = _hit(api, "canary", "short-canary"), _hit(api, "canary", "long-canary")
    assert long["approx_tokens"] > short["approx_tokens"] + text_tokens(LONG_BODY) // 2
    assert _root(api, slug="long-canary")["approx_tokens"] == long["approx_tokens"]


def test_with_arguments_the_estimate_also_counts_the_rendered_body(
    pg: None, env: Env, api_for: ApiFactory
) -> None:
    publish(env.owner, env.personal, slug="deploy", instruction_body="Deploy $ARGUMENTS. " * 200)
    api = api_for(env.owner)
    plain = _root(api, slug="deploy")
    rendered = _root(api, slug="deploy", arguments="the api service to eu-west")
    assert len(rendered["rendered_body"]) > len(plain["instruction_body"])
    assert (
        rendered["approx_tokens"]
        > plain["approx_tokens"] + text_tokens(rendered["rendered_body"]) - 10
    )
    assert list(rendered)[-2:] == ["approx_tokens", "rendered_body"]
    # Level 0 keeps describing the default answer (no arguments).
    assert _hit(api, "deploy", "deploy")["approx_tokens"] == plain["approx_tokens"]


def _migrations() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(the schema just before this feature's migration, the latest schema)."""
    graph = MigrationExecutor(connection).loader.graph
    [mine] = [
        key
        for key in graph.nodes
        if key[0] == "skills_app" and key[1].endswith("_revision_approx_tokens")
    ]
    before = [p.key for p in graph.node_map[mine].parents if p.key[0] == "skills_app"]
    return before, graph.leaf_nodes("skills_app")


@pytest.mark.django_db(transaction=True)
def test_the_migration_fills_existing_revisions_and_seals_the_column(pg: None, env: Env) -> None:
    made = [
        save(env.owner, env.personal, slug="one").revision,
        save(
            env.owner,
            env.personal,
            slug="two",
            instruction_body=LONG_BODY,
            frontmatter={"zeta": 1, "alpha": ["ü", {"b": 2}]},
            components=(
                component("a/b.md", "# B\n"),
                component("c.png", b"\x89PNG\x00", "artifact"),
            ),
        ).revision,
        save(env.owner, env.personal, slug="three", components=()).revision,
    ]
    before, after = _migrations()
    MigrationExecutor(connection).migrate(before)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM information_schema.columns"
            " WHERE table_name = 'skills_app_skillrevision' AND column_name = 'approx_tokens'"
        )
        assert cursor.fetchone() == (0,)  # those rows are now rows of an older schema
    MigrationExecutor(connection).migrate(after)
    for rev in made:
        assert SkillRevision.objects.get(pk=rev.pk).approx_tokens == rev.approx_tokens > 0
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE skills_app_skillrevision SET approx_tokens = 0 WHERE id = %s", [made[0].pk]
        )
    with connection.cursor() as cursor:  # state still moves
        cursor.execute(
            "UPDATE skills_app_skillrevision SET state = 'deprecated' WHERE id = %s", [made[0].pk]
        )


SQLITE_SCRIPT = """
import json
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from skills_app.access import Actor
from skills_app.domain.bundle import ComponentData, SkillBundle
from skills_app.models import SkillRevision, Workspace
from skills_app.selectors.recall import recall
from skills_app.services.accounts import user_create
from skills_app.services.skills import skill_save

user = user_create(username="sq")
actor = Actor(user=user)
ws = Workspace.objects.get(slug="sq")
def made(slug, body):
    return skill_save(actor=actor, workspace=ws, slug=slug, intent="publish", bundle=SkillBundle(
        name="Canary " + slug, description="d", instruction_body=body, frontmatter={"k": "ü"},
        components=(ComponentData("a.md", "document", b"bytes", "text/markdown"),))).revision
small, big = made("small", "short"), made("big", "word " * 500)
found = recall(actor=actor, query="canary")["data"]["results"]
hits = {h["slug"]: h["approx_tokens"] for h in found}
roots = {s: recall(actor=actor, slug=s)["data"]["approx_tokens"] for s in ("small", "big")}
try:
    with connection.cursor() as c:
        c.execute("UPDATE skills_app_skillrevision SET approx_tokens = 1 WHERE id = %s", [big.pk])
    update = "allowed"
except Exception as exc:
    update = "refused:" + type(exc).__name__
graph = MigrationExecutor(connection).loader.graph
[mine] = [k for k in graph.nodes
          if k[0] == "skills_app" and k[1].endswith("_revision_approx_tokens")]
[parent] = [p.key for p in graph.node_map[mine].parents if p.key[0] == "skills_app"]
call_command("migrate", "skills_app", parent[1], verbosity=0)
call_command("migrate", "skills_app", verbosity=0)
refilled = {s: SkillRevision.objects.get(pk=r.pk).approx_tokens
            for s, r in (("small", small), ("big", big))}
print(json.dumps([hits, roots, update, refilled]))
"""


def test_sqlite_carries_the_estimate_and_its_migration_refills_it(tmp_path: Path) -> None:
    out = run_on_fresh_sqlite(SQLITE_SCRIPT, tmp_path)
    hits, roots, update, refilled = json.loads(out.splitlines()[-1])
    assert hits == roots == refilled
    assert roots["big"] > roots["small"] + 500
    assert update == "refused:IntegrityError"
