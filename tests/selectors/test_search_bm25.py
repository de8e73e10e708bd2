"""Level 0 by words is BM25F, and the same on both databases: the same skills and queries give
the same ranking and scores on PostgreSQL as on the embedded default (SQLite), typos too."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from django.db import connection

from skills_app.domain.search_text import K1, bm25f, nearest_word, term_statistics
from tests.support import require_service, run_on_fresh_sqlite

# Skills of the evaluation set (bench/search_eval): real SKILL.md text, near neighbours among them.
SCRIPT = """
import json
from pathlib import Path
import yaml
from skills_app.access import Actor
from skills_app.domain.search_text import query_words
from skills_app.models import Skill, Workspace
from skills_app.selectors.search import lexical
from skills_app.selectors.search.gate import gate_for
from skills_app.services.accounts import token_create, user_create
from tests.factories import publish

user = user_create(username="bm25")
ws = Workspace.objects.get(slug="bm25")
skills = []
for name in ("obra", "anthropics"):
    skills += yaml.safe_load(Path(f"EVAL/skills_public_{name}.yaml").read_text())
for s in skills:
    publish(user, ws, slug=s["slug"], name=s["name"], description=s["description"],
            instruction_body=s["body"])
token, _ = token_create(actor=Actor(user=user, via="cli"), user=user, name="t",
                        scopes=["skills:read"])
gate = gate_for(actor=Actor(user=user, token=token, via="api"), workspace=None)
queries = [
    "write a plan before touching code", "debugging a flaky test", "brand colours and fonts",
    "test driven development", "review my pull request", "skills", "frontend design canvas",
    "systematic root cause", "mcp server builder for an api", "slack gif", "theme factory",
    "verification before completion", "subagent", "git worktrees isolation", "webapp testing",
    "tests for the testing skill",
    # Typos: each stands for the nearest word a skill holds, on either database.
    "systematik debuging", "brand colurs and fonts", "verifcation befor completion",
    "git worktres", "subagnt driven developmnt",
]
queries = [q + "." for q in queries]
# A last word still being typed: the stems it begins (or, if none, its nearest word).
queries += ["brand colo", "systematic debu", "git worktr", "writing plxn"]
slugs = dict(Skill.objects.values_list("pk", "slug"))
print(json.dumps({q: [[slugs[pk], round(score, 9)] for pk, score in lexical.rank(
    gate=gate, words=query_words(q), slug_guess="", limit=50)] for q in queries}))
""".replace("EVAL", str(Path(__file__).resolve().parents[2] / "bench" / "search_eval"))


def test_postgresql_and_sqlite_rank_the_same_skills_alike(db: None, tmp_path: Path) -> None:
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):  # the script, here: PostgreSQL's test database
        exec(SCRIPT, {})
    on_postgresql = json.loads(out.getvalue().splitlines()[-1])
    on_sqlite = json.loads(run_on_fresh_sqlite(SCRIPT, tmp_path).splitlines()[-1])
    assert sum(len(ranked) for ranked in on_postgresql.values()) > 100  # they find skills
    assert on_postgresql == on_sqlite


def test_fields_weigh_name_above_description_above_body() -> None:
    """Once in the name outweighs once in the description, which outweighs once in the body."""
    stats = term_statistics(name="Zeppelin", slug="x", description="Other.", body="Nothing.")
    name, description, body = (
        bm25f([count], stats["l"], [1.0]) for count in ([1, 0, 0], [0, 1, 0], [0, 0, 1])
    )
    assert name > description > body > 0
    assert bm25f([stats["t"]["zeppelin"]], stats["l"], [1.0]) == name


def test_counts_saturate_and_long_fields_count_less() -> None:
    short = [2, 8, 40]
    once, twice, many = (bm25f([[0, 0, n]], short, [1.0]) for n in (1, 2, 50))
    assert once < twice < many < 1.0  # more occurrences weigh more, never past the IDF
    assert twice - once > many / 50  # the second counts more than the fiftieth
    assert many > 50 / (K1 + 50) - 1e-9
    long_body = bm25f([[0, 0, 1]], [2, 8, 2000], [1.0])
    assert long_body < once  # the same count in a far longer body weighs less


def test_a_typo_stands_for_the_most_similar_word_then_the_most_held() -> None:
    """``nearest_word``, the embedded default's typo mapping, orders as PostgreSQL's query does:
    the most similar word, then the one more skills hold; nothing under the threshold."""
    vocabulary = {"rollout": 2, "rollback": 9, "kubernet": 1}
    assert nearest_word("rolout", vocabulary, at_least=0.45) == "rollout"
    assert nearest_word("zeppelin", vocabulary, at_least=0.45) is None
    tied = {"abcx": 1, "abcy": 5}  # equally like "abcz"
    assert nearest_word("abcz", tied, at_least=0.1) == "abcy"
    assert nearest_word("abcz", {**tied, "abcy": 1}, at_least=0.1) == "abcx"
