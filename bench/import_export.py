"""Import and export timings for a 50-component, ~6 MiB skill (the largest a revision may be).

Runs the real job path (``import_start`` + ``job_run``, ``export_start`` + ``job_run``) against
a throwaway database — PostgreSQL when DATABASE_URL is set, else SQLite — and reports each
median beside a baseline measured in the same run: reading the same ZIP with plain ``zipfile``
(and hashing each entry) for import, writing the same bytes with plain ``zipfile`` for export.
Ratios, not seconds, are the figures to compare across machines.

    python -m bench.import_export [--runs 7]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import statistics
import time
import zipfile
from collections.abc import Callable

COMPONENTS = 50
COMPONENT_BYTES = 123 * 1024  # 50 x 123 KiB ~ 6 MiB, each under the 128 KiB limit


def _skill_zip(seed: int) -> bytes:
    """A skill folder ZIP with 50 distinct text components (fresh bytes per seed: no dedup)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "big-skill/SKILL.md",
            f"---\nname: Big skill {seed}\ndescription: Fifty components.\n---\n# Big\n",
        )
        for i in range(COMPONENTS):
            block = hashlib.sha256(f"{seed}:{i}".encode()).hexdigest()
            text = "\n".join(f"{block} line {n}" for n in range(COMPONENT_BYTES // 80))
            archive.writestr(f"big-skill/references/part-{i:02d}.md", text[:COMPONENT_BYTES])
    return buffer.getvalue()


def _median(fn: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _baseline_read(data: bytes) -> None:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            hashlib.sha256(archive.read(info)).hexdigest()


def _baseline_write(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "xmemo.settings")
    import django

    django.setup()
    from django.db import connection

    from skills_app.access import Actor
    from skills_app.models import Job, SkillRevision, Workspace
    from skills_app.services.accounts import user_create
    from skills_app.services.jobs import export_start, import_start
    from skills_app.services.jobs.run import job_run
    from xmemo.celery import app

    app.conf.task_always_eager = True
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        user = user_create(username="bench")
        workspace = Workspace.objects.get(slug="bench")
        actor = Actor(user=user, via="bench")
        zips = [_skill_zip(seed) for seed in range(args.runs + 1)]
        raw = COMPONENTS * COMPONENT_BYTES / 2**20
        print(
            f"skill: {COMPONENTS} components, {raw:.1f} MiB, {len(zips[0]) / 2**20:.2f} MiB zipped"
        )
        seeds = iter(range(len(zips)))

        def do_import() -> None:
            job = import_start(
                actor=actor, workspace=workspace, data=zips[next(seeds)], filename="big.zip"
            )
            job_run(job_id=job.job_id)
            job.refresh_from_db()
            assert job.state == "succeeded", job.error

        import_s = _median(do_import, args.runs)
        read_s = _median(lambda: _baseline_read(zips[0]), args.runs)

        revision = SkillRevision.objects.order_by("-id").first()
        assert revision is not None
        files = {
            c.logical_path: bytes(c.blob.data) for c in revision.components.select_related("blob")
        }

        def do_export() -> None:
            job = export_start(actor=actor, revision=revision)
            job_run(job_id=job.job_id)
            assert Job.objects.get(pk=job.pk).state == "succeeded"

        export_s = _median(do_export, args.runs)
        write_s = _median(lambda: _baseline_write(files), args.runs)
        print(f"database: {connection.vendor}, runs: {args.runs} (medians)")
        for label, took, base_label, base in (
            ("import job", import_s, "zipfile read+hash", read_s),
            ("export job", export_s, "zipfile write", write_s),
        ):
            print(
                f"{label}: {took * 1000:8.1f} ms   {base_label} baseline {base * 1000:7.1f} ms"
                f"   ratio {took / base:5.2f}x"
            )
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
