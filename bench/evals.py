"""Trigger checks (docs/evals.md) on 1,000 skills, and Level 0 and 1 beside a running check.

    python -m bench.evals [--skills 1000] [--seconds 10]

Seeds a team (``bench.seed``'s content; 20 skills with trigger sets of 10 tasks), proposes a
revision with 50 and 50 tasks that also claims another skill's, and times its checks (goal:
within a minute). Then Level 1 of that skill and Level 0, in interleaved windows: idle, and
while another connection holds a check's stand-in open (the skill's row changed, uncommitted).
The ratio says whether a running check slows what agents get (goal: about 1)."""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

from bench.recall import DEFAULT_DB, ROOT, _django, _ensure_database, _env, _redis_url
from bench.seed import TOPIC_WORDS

TRIGGERED = 20


def _triggers(should: list[str], should_not: list[str]) -> Any:
    from skills_app.domain.bundle import ComponentData

    raw = json.dumps({"should_trigger": should, "should_not_trigger": should_not}).encode()
    return ComponentData("evals/triggers.json", "document", raw, "application/json")


def _task(rng: random.Random, topic: str) -> str:
    others = rng.sample(TOPIC_WORDS, 3)
    return f"{topic} the {others[0]} {others[1]} for the {others[2]} team"


def _setup(skills: int) -> tuple[Any, Any, Any]:
    """The team (seeded), its owner's actor and a reviewer's; the triggered skills published."""
    from django.db import transaction

    from bench.seed import ensure_account, seed, seed_vectors
    from skills_app.access import Actor
    from skills_app.domain.bundle import SkillBundle
    from skills_app.models import Membership, Skill
    from skills_app.services.accounts import user_create
    from skills_app.services.embeddings import embeddings_catch_up
    from skills_app.services.skills import revision_transition, skill_save

    team, _ = ensure_account()
    seed(skills - TRIGGERED, progress=lambda _: None)
    seed_vectors(progress=lambda _: None)
    owner = Actor(user=team.created_by, via="cli")
    reviewer_user = user_create(username="bench-reviewer")
    Membership.objects.get_or_create(workspace=team, user=reviewer_user, role="admin")
    reviewer = Actor(user=reviewer_user, via="cli")
    rng = random.Random(3)
    for index in range(TRIGGERED):
        slug = f"checked-{index:02d}"
        if Skill.objects.filter(workspace=team, slug=slug).exists():
            continue
        topic = TOPIC_WORDS[index]
        tasks = [_task(rng, topic) for _ in range(10)]
        with transaction.atomic():
            saved = skill_save(
                actor=owner,
                workspace=team,
                slug=slug,
                bundle=SkillBundle(
                    name=f"{topic.title()} runbook",
                    description=f"How the team handles {topic}: " + "; ".join(tasks[:3]) + ".",
                    instruction_body=f"# {topic}\n\n" + "\n".join(f"- {t}" for t in tasks),
                    components=(_triggers(tasks, [_task(rng, TOPIC_WORDS[-1 - index])]),),
                ),
                intent="publish",
            )
            revision_transition(actor=reviewer, revision=saved.revision, action="approve")
    embeddings_catch_up(workspace=team)
    return team, owner, reviewer


def _proposal(team: Any, owner: Any) -> Any:
    """A revision of checked-00 with 50 and 50 tasks that also claims checked-01's."""
    from skills_app.domain.bundle import SkillBundle
    from skills_app.selectors.evals import revision_triggers
    from skills_app.services.skills import skill_save

    rng = random.Random(5)
    theirs = revision_triggers(revision_pk=team.skills.get(slug="checked-01").current_revision_id)
    assert theirs is not None
    should = [_task(rng, TOPIC_WORDS[0]) for _ in range(50 - 5)] + list(theirs.should_trigger[:5])
    should_not = [_task(rng, rng.choice(TOPIC_WORDS[2:])) for _ in range(50)]
    return skill_save(
        actor=owner,
        workspace=team,
        slug="checked-00",
        bundle=SkillBundle(
            name=f"{TOPIC_WORDS[0].title()} and {TOPIC_WORDS[1]} runbook",
            description="; ".join(should[:4]) + "; " + theirs.should_trigger[0],
            instruction_body="\n".join(f"- {t}" for t in should),
            components=(_triggers(should, should_not),),
        ),
        intent="publish",
        message=f"bench {time.time()}",
    ).revision


def _hold_stand_in(skill_pk: int, go: threading.Event, done: threading.Event) -> None:
    """Another connection inside a check: the skill's row holds other words, uncommitted."""
    from django.db import connection, transaction

    from skills_app.models import Skill

    try:
        with transaction.atomic():
            Skill.objects.filter(pk=skill_pk).update(
                search_name="stand in", search_description="a check is running", search_body="x"
            )
            go.set()
            done.wait()
            transaction.set_rollback(True)
    finally:
        connection.close()


def _timed(seconds: float, once: Any) -> list[float]:
    times: list[float] = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(times) < 20:
        started = time.perf_counter()
        once()
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.evals", description=__doc__)
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10.0, help="per scenario")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    base_db = os.environ.get("BENCH_DATABASE_URL", DEFAULT_DB)
    parser.add_argument("--db", default=f"{base_db}_evals")
    args = parser.parse_args()

    env = _env(args.db, _redis_url())
    _ensure_database(args.db)
    migrate = [sys.executable, "manage.py", "migrate", "--noinput", "-v0"]
    subprocess.run(migrate, cwd=ROOT, env=env, check=True)
    _django(env)
    from skills_app.access import Actor
    from skills_app.models import ApiToken
    from skills_app.selectors.evals import served_set, served_trigger_tasks
    from skills_app.selectors.recall import recall
    from skills_app.services.evals import evaluation_compute

    team, owner, _ = _setup(args.skills)
    served = served_set(workspace=team)
    proposal = _proposal(team, owner)
    started = time.perf_counter()
    evaluation = evaluation_compute(revision=proposal)
    took = time.perf_counter() - started
    assert evaluation is not None
    figures = evaluation.figures
    others = len(served_trigger_tasks(workspace=team, skill_pk=proposal.skill_id))

    token = ApiToken.objects.filter(user=owner.user).first()
    agent = Actor(user=owner.user, token=token, via="api")
    skill_pk = proposal.skill_id
    level1: dict[bool, list[float]] = {False: [], True: []}
    level0: dict[bool, list[float]] = {False: [], True: []}
    rng = random.Random(0)
    window = args.seconds / args.rounds

    def one_recall() -> None:
        recall(actor=agent, slug="checked-00", workspace=team.slug)

    def one_search() -> None:
        recall(actor=agent, query=_task(rng, rng.choice(TOPIC_WORDS)), workspace=team.slug)

    for _ in range(args.rounds):
        for held in rng.sample([False, True], 2):
            done, go = threading.Event(), threading.Event()
            holder = None
            if held:
                holder = threading.Thread(target=_hold_stand_in, args=(skill_pk, go, done))
                holder.start()
                go.wait()
            level1[held] += _timed(window, one_recall)
            level0[held] += _timed(window, one_search)
            done.set()
            if holder is not None:
                holder.join()

    def p50(times: list[float]) -> float:
        return statistics.median(times)

    print(f"Trigger checks on {served.skills:,} served skills ({TRIGGERED} with trigger sets)")
    print(
        f"  one proposal ({len(figures['tasks'])} tasks, and the others' {others} should-trigger"
        " tasks):"
        f" {took:.1f} s (goal: within 60 s); recall at 1 {figures['recall_at_1']},"
        f" wins from {[c['slug'] for c in figures['collisions']['wins_from']]}"
    )
    for name, times in (("Level 1", level1), ("Level 0", level0)):
        ratio = p50(times[True]) / p50(times[False])
        print(
            f"  {name}: p50 {p50(times[False]):.2f} ms idle, {p50(times[True]):.2f} ms while a"
            f" check holds its stand-in: ratio {ratio:.2f} (goal: about 1)"
        )


if __name__ == "__main__":
    main()
