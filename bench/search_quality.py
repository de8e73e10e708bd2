"""Level 0 search quality on PostgreSQL, beside a plain BM25 baseline.

    python -m bench.search_quality

The evaluation set in ``bench/search_eval``: skills written for this benchmark, and natural
tasks each naming the one skill that should answer it (kinds: ``other`` words than the skill's
own, ``keyword``, ``short`` and ``misspelled``). The skills are published through
``services.skills.skill_save`` into a personal workspace of a fresh database
(``BENCH_SEARCH_DATABASE_URL``, default: the ``BENCH_DATABASE_URL`` server with the database
``xmemo_search_eval``, dropped and recreated on every run), and every task is searched through
the public Level 0 selector (``recall_search``) with an agent's read token. A plain BM25
(``bm25s``, English stop words, no stemming) over name + description + body of the same skills
is computed in the same run. Prints hit@1, hit@3, hit@10 and MRR over all tasks and over the
other-words subset; ``BENCH_SEARCH_MISSES=1`` also lists the tasks Level 0 misses in its top 3.
"""

from __future__ import annotations

import argparse
import logging
import os
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bench.recall import DEFAULT_DB as RECALL_DB
from bench.recall import _django, _env

EVAL = Path(__file__).resolve().parent / "search_eval"
DATABASE_NAME = "xmemo_search_eval"
USERNAME = "search-eval"
METRICS = ("hit@1", "hit@3", "hit@10", "MRR")


@dataclass(frozen=True)
class Task:
    query: str
    expect: str
    kind: str


def load_skills() -> list[dict[str, str]]:
    skills: list[dict[str, str]] = []
    for path in sorted(EVAL.glob("skills_*.yaml")):
        skills += yaml.safe_load(path.read_text(encoding="utf-8"))
    return skills


def load_tasks() -> list[Task]:
    rows = yaml.safe_load((EVAL / "tasks.yaml").read_text(encoding="utf-8"))
    return [Task(query=r["q"], expect=r["expect"], kind=r["kind"]) for r in rows]


def metrics(ranked: list[list[str]], tasks: list[Task]) -> dict[str, float]:
    """hit@k: the expected skill is among the first k; MRR: mean of 1/rank (0 beyond 10)."""
    hits = {1: 0, 3: 0, 10: 0}
    reciprocal = 0.0
    for slugs, task in zip(ranked, tasks, strict=True):
        if task.expect in slugs[:10]:
            rank = slugs.index(task.expect) + 1
            reciprocal += 1 / rank
            for k in hits:
                hits[k] += rank <= k
    n = len(tasks) or 1
    return {
        "hit@1": hits[1] / n,
        "hit@3": hits[3] / n,
        "hit@10": hits[10] / n,
        "MRR": reciprocal / n,
    }


def _database_url() -> str:
    explicit = os.environ.get("BENCH_SEARCH_DATABASE_URL")
    if explicit:
        return explicit
    # Never the recall bench's own database: this one is dropped on every run.
    server = urllib.parse.urlparse(os.environ.get("BENCH_DATABASE_URL", RECALL_DB))
    return server._replace(path=f"/{DATABASE_NAME}").geturl()


def _fresh_database(db_url: str) -> None:
    import psycopg

    parsed = urllib.parse.urlparse(db_url)
    name = parsed.path.lstrip("/")
    admin = parsed._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def _publish_all(skills: list[dict[str, str]]) -> Any:
    """Publish every skill in a personal workspace; returns an agent's read-token actor."""
    from skills_app.access import Actor
    from skills_app.domain.bundle import SkillBundle
    from skills_app.models import Workspace
    from skills_app.services.accounts import token_create, user_create
    from skills_app.services.skills import skill_save

    user = user_create(username=USERNAME)
    workspace = Workspace.objects.get(slug=USERNAME)
    owner = Actor(user=user, via="cli")
    for skill in skills:
        skill_save(
            actor=owner,
            workspace=workspace,
            slug=skill["slug"],
            bundle=SkillBundle(
                name=skill["name"],
                description=skill["description"],
                frontmatter={},
                instruction_body=skill["body"],
                components=(),
            ),
            intent="publish",
        )
    token, _ = token_create(actor=owner, user=user, name="eval", scopes=["skills:read"])
    return Actor(user=user, token=token, via="api")


def _embed_all() -> None:
    """What the workers do after each save, all at once (the same service)."""
    from skills_app.infra import embedding
    from skills_app.services.embeddings import embeddings_catch_up

    if embedding.encoder() is None:
        print("No embedding model installed: Level 0 ranks by words alone.")
        return
    counts = embeddings_catch_up()
    print(f"{counts.stored} skills embedded")


def _bm25(skills: list[dict[str, str]], tasks: list[Task]) -> list[list[str]]:
    import bm25s

    logging.getLogger("bm25s").setLevel(logging.WARNING)  # its index build logs at DEBUG
    corpus = [f"{s['name']} {s['description']} {s['body']}" for s in skills]
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False
    )
    ranked: list[list[str]] = []
    for task in tasks:
        tokens = bm25s.tokenize([task.query], stopwords="en", show_progress=False)
        if not tokens.vocab:  # only stop words: BM25 has nothing to rank
            ranked.append([])
            continue
        docs, _ = retriever.retrieve(tokens, k=10, show_progress=False)
        ranked.append([skills[i]["slug"] for i in docs[0]])
    return ranked


def _level0(actor: Any, tasks: list[Task]) -> list[list[str]]:
    from skills_app.selectors.recall import recall_search

    return [
        [
            hit["slug"]
            for hit in recall_search(actor=actor, query=t.query, limit=10)["data"]["results"]
        ]
        for t in tasks
    ]


def _table(rows: dict[str, dict[str, float]]) -> str:
    lines = [f"{'':<34}" + "".join(f"{n:>8}" for n in METRICS)]
    for label, values in rows.items():
        lines.append(f"{label:<34}" + "".join(f"{values[n]:>8.2f}" for n in METRICS))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.parse_args()
    db_url = _database_url()
    _fresh_database(db_url)
    _django(_env(db_url, None))  # no Redis: local-memory cache, tasks run in process
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    skills, tasks = load_skills(), load_tasks()
    print(f"{len(skills)} skills, {len(tasks)} tasks")
    actor = _publish_all(skills)
    _embed_all()
    level0, bm25 = _level0(actor, tasks), _bm25(skills, tasks)
    other = [i for i, t in enumerate(tasks) if t.kind == "other"]
    other_tasks = [tasks[i] for i in other]
    print(
        _table(
            {
                "Level 0 (all tasks)": metrics(level0, tasks),
                "BM25 (all tasks)": metrics(bm25, tasks),
                f"Level 0 (other words, {len(other)})": metrics(
                    [level0[i] for i in other], other_tasks
                ),
                f"BM25 (other words, {len(other)})": metrics([bm25[i] for i in other], other_tasks),
            }
        )
    )
    if os.environ.get("BENCH_SEARCH_MISSES"):
        for slugs, task in zip(level0, tasks, strict=True):
            if task.expect not in slugs[:3]:
                print(f"  miss [{task.kind}] {task.query!r} -> {slugs[:3]} (want {task.expect})")


if __name__ == "__main__":
    main()
