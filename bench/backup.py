"""Workspace backup and restore timings: 200 skills x 5 revisions (goal: each under 10 s).

Runs the real job path (``export_start`` + ``job_run`` for the backup, ``restore_start`` +
``job_run`` into an empty team for the restore) against a throwaway database — PostgreSQL when
DATABASE_URL is set, else SQLite — and reports the median of ``--runs`` runs of each.

    python -m bench.backup [--skills 200] [--revisions 5] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skills", type=int, default=200)
    parser.add_argument("--revisions", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "xmemo.settings")
    import django

    django.setup()
    from django.db import connection

    from skills_app.access import Actor
    from skills_app.domain.bundle import ComponentData, SkillBundle
    from skills_app.models import Job, Membership, Workspace
    from skills_app.services.accounts import user_create
    from skills_app.services.jobs import export_start, restore_start
    from skills_app.services.jobs.run import job_run
    from skills_app.services.skills import skill_save
    from xmemo.celery import app

    app.conf.task_always_eager = True
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        user = user_create(username="bench")
        actor = Actor(user=user, via="bench")

        def team(slug: str) -> Workspace:
            workspace = Workspace.objects.create(slug=slug, name=slug, kind="team")
            Membership.objects.create(workspace=workspace, user=user, role="owner")
            return workspace

        source = team("bench-source")
        started = time.perf_counter()
        for s in range(args.skills):
            for r in range(args.revisions):
                body = f"# Skill {s}\n\n" + f"Step {r} of the procedure, in some detail.\n" * 20
                skill_save(
                    actor=actor,
                    workspace=source,
                    slug=f"skill-{s:03d}",
                    bundle=SkillBundle(
                        name=f"Skill {s}",
                        description=f"Benchmark skill {s}, revision {r + 1}.",
                        instruction_body=body,
                        frontmatter={"license": "MIT", "metadata": {"rev": r}},
                        components=(
                            ComponentData("references/guide.md", "reference", body.encode() * 2),
                            ComponentData("assets/data.bin", "artifact", bytes([s % 256]) * 4096),
                        ),
                    ),
                    intent="publish",
                )
        revisions = args.skills * args.revisions
        print(
            f"seeded {args.skills} skills x {args.revisions} revisions in "
            f"{time.perf_counter() - started:.1f} s ({connection.vendor})"
        )

        def finished(job: Job) -> Job:
            job_run(job_id=job.job_id)
            done = Job.objects.get(pk=job.pk)
            assert done.state == "succeeded", done.error
            return done

        backups, restores = [], []
        backup = b""
        for run in range(args.runs):
            started = time.perf_counter()
            job = finished(export_start(actor=actor, workspace=source))
            backups.append(time.perf_counter() - started)
            backup = bytes(job.output_data or b"")
            target = team(f"bench-copy-{run}")
            started = time.perf_counter()
            finished(restore_start(actor=actor, workspace=target, data=backup))
            restores.append(time.perf_counter() - started)
        print(f"backup file: {len(backup) / 2**20:.2f} MiB for {revisions} revisions")
        for label, samples in (("backup (export job)", backups), ("restore job", restores)):
            median = statistics.median(samples)
            verdict = "ok" if median < 10 else "OVER the 10 s goal"
            print(f"{label}: median {median:6.2f} s over {args.runs} runs ({verdict})")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
