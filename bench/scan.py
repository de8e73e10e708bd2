"""The scanner on real public skills (docs/scanning.md): the share blocked and warned (each block
and warning printed with its findings, for a reviewer's eye) and the scan time per revision,
beside the bare ``cisco-ai-skill-scanner`` CLI when it is installed (``--cisco PATH`` or
``BENCH_CISCO``).

    python -m bench.scan [--cisco PATH]

The corpus: the evaluation set's public skills (``bench/search_eval/skills_public_*.yaml``,
bodies cut at 3,000 characters) and ``tests/fixtures/skills``. No database, no network."""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import yaml

from skills_app.domain.bundle import SkillBundle
from skills_app.domain.scan import SCANNER_VERSION, ScanReport, scan_bundle
from skills_app.domain.skillmd import merge_frontmatter, serialize_skill_md
from skills_app.formats.detect import upload_bundles_read

ROOT = Path(__file__).resolve().parents[1]
PUBLIC = sorted((ROOT / "bench" / "search_eval").glob("skills_public_*.yaml"))
FIXTURES = ROOT / "tests" / "fixtures" / "skills"
ROUNDS = 5


def _folder_bundle(folder: Path) -> SkillBundle:
    """A skill folder read as an import reads its ZIP."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            archive.writestr(
                f"{folder.name}/{path.relative_to(folder).as_posix()}", path.read_bytes()
            )
    [bundle] = upload_bundles_read(data.getvalue(), f"{folder.name}.zip")
    return bundle


def corpus() -> list[tuple[str, SkillBundle]]:
    """``(slug, bundle)`` of every public skill and fixture folder."""
    skills: list[tuple[str, SkillBundle]] = []
    for path in PUBLIC:
        for item in yaml.safe_load(path.read_text(encoding="utf-8")):
            skills.append(
                (
                    item["slug"],
                    SkillBundle(
                        name=item["slug"],
                        description=item["description"],
                        instruction_body=item["body"],
                        components=(),
                    ),
                )
            )
    for folder in sorted(p for p in FIXTURES.iterdir() if (p / "SKILL.md").is_file()):
        skills.append((folder.name, _folder_bundle(folder)))
    return skills


def write_skill_dir(root: Path, slug: str, bundle: SkillBundle) -> Path:
    """The skill as a folder (``SKILL.md`` and its files), for a scanner that reads folders."""
    folder = root / slug
    folder.mkdir(parents=True)
    text = serialize_skill_md(
        merge_frontmatter(bundle.name, bundle.description, bundle.frontmatter, slug=slug),
        bundle.instruction_body,
    )
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    for c in bundle.components or ():
        target = folder / c.logical_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(c.content)
    return folder


def cisco_scan(cli: str, skills: Iterable[tuple[str, SkillBundle]]) -> dict[str, dict]:
    """The bare ``skill-scanner scan-all`` on the skills (static analyzers, its defaults):
    ``{slug: its result}`` and the wall time under ``"_seconds"``."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "skills"
        for slug, bundle in skills:
            write_skill_dir(root, slug, bundle)
        out = Path(tmp) / "report.json"
        began = time.perf_counter()
        subprocess.run(
            [cli, "scan-all", str(root), "--format", "json", "-o", str(out)],
            check=False,
            capture_output=True,
        )
        seconds = time.perf_counter() - began
        report = json.loads(out.read_text()) if out.exists() else {"results": []}
    results = {Path(r["skill_path"]).name: r for r in report.get("results", [])}
    return {**results, "_seconds": {"seconds": seconds}}


def cisco_verdict(result: dict) -> str:
    severity = str(result.get("max_severity") or "").upper()
    if severity in ("HIGH", "CRITICAL"):
        return "block"
    return "warn" if severity in ("MEDIUM", "LOW") else "clean"


def timed_scans(skills: list[tuple[str, SkillBundle]]) -> tuple[list[ScanReport], list[float]]:
    """Each skill's report, and its best scan time of ``ROUNDS`` in milliseconds."""
    reports, times = [], []
    for slug, bundle in skills:
        best = float("inf")
        for _ in range(ROUNDS):
            began = time.perf_counter()
            report = scan_bundle(slug=slug, bundle=bundle)
            best = min(best, time.perf_counter() - began)
        reports.append(report)
        times.append(best * 1000)
    return reports, times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cisco", default=os.environ.get("BENCH_CISCO"))
    args = parser.parse_args()
    skills = corpus()
    reports, times = timed_scans(skills)
    verdicts = Counter(r.verdict for r in reports)
    n = len(skills)
    print(f"bench.scan: {SCANNER_VERSION} on {n} public skills")
    for (slug, _), report in zip(skills, reports, strict=True):
        if report.verdict != "clean":
            print(f"  {report.verdict:5} {slug}")
            for f in report.findings:
                print(f"        {f.severity:8} {f.rule_id} {f.path}:{f.line} {f.excerpt[:70]}")
    print(
        f"  blocked {verdicts['block']}/{n} ({verdicts['block'] / n:.1%}), "
        f"warned {verdicts['warn']}/{n} ({verdicts['warn'] / n:.1%})"
    )
    print(
        f"  scan time per revision: median {statistics.median(times):.1f} ms, "
        f"p95 {sorted(times)[int(0.95 * (n - 1))]:.1f} ms, max {max(times):.1f} ms"
    )
    if not args.cisco:
        print("  cisco-ai-skill-scanner: not run (pass --cisco PATH or BENCH_CISCO)")
        return
    theirs = cisco_scan(args.cisco, skills)
    counts = Counter(cisco_verdict(theirs[slug]) for slug, _ in skills if slug in theirs)
    print(
        f"  cisco-ai-skill-scanner CLI: blocked {counts['block']}/{n}, warned {counts['warn']}/{n},"
        f" {theirs['_seconds']['seconds']:.1f} s for all (start-up included)"
    )
    for slug, _ in skills:
        if slug in theirs and cisco_verdict(theirs[slug]) == "block":
            rules = sorted({f["rule_id"] for f in theirs[slug]["findings"]})
            print(f"    block {slug}: {', '.join(rules)}")


if __name__ == "__main__":
    main()
