"""The directory-tree loader: one entry per find, never stopping on a broken one."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from skills_app.formats.directory import (
    DirectoryEntry,
    directory_outcomes,
    directory_scan,
    format_log_line,
    split_roots,
)
from tests.formats.helpers import FIXTURES, SKILL_MD


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A realistic, partly broken skills root next to a folder it must never read."""
    root = tmp_path / "skills"
    outside = tmp_path / "outside"
    (outside / "evil").mkdir(parents=True)
    (outside / "evil" / "SKILL.md").write_bytes(SKILL_MD)
    (outside / "secret.txt").write_text("s3cret")

    for name in ("incident-response", "disk-usage"):
        shutil.copytree(FIXTURES / name, root / name)
    shutil.copytree(FIXTURES / "incident-response", root / "team-b" / "incident-response")
    (root / "broken").mkdir()
    (root / "broken" / "skill.json").write_text('{"name": "broken_one",}')
    (root / "bad-yaml").mkdir()
    (root / "bad-yaml" / "SKILL.md").write_text("---\nname: [oops\n---\n")
    (root / "linked").symlink_to(outside / "evil", target_is_directory=True)
    (root / "leaky" / "references").mkdir(parents=True)
    (root / "leaky" / "SKILL.md").write_bytes(SKILL_MD)
    (root / "leaky" / "references" / "notes.md").symlink_to(outside / "secret.txt")
    (root / "also-incident").symlink_to(root / "incident-response", target_is_directory=True)
    (root / "piped").mkdir()
    (root / "piped" / "SKILL.md").write_bytes(SKILL_MD)
    os.mkfifo(root / "piped" / "feed.md")  # opening it would block forever
    (root / "notes.md").write_text("# Loose notes\n")
    (root / "drafts").mkdir()
    (root / "drafts" / "skill.md").write_text("---\nname: draft\n---\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD.md").write_text("ref")
    return root


def _scan(root: Path) -> dict[str, DirectoryEntry]:
    entries = list(directory_scan([root], allowed_roots=[root.parent]))
    return {entry.path.relative_to(root).as_posix(): entry for entry in entries}


def test_every_manifest_gets_exactly_one_entry(tree: Path) -> None:
    found = _scan(tree)
    assert {path: entry.status for path, entry in found.items()} == {
        "bad-yaml/SKILL.md": "parse_error",
        "broken/skill.json": "parse_error",
        "disk-usage/skill.json": "ok",
        "drafts/skill.md": "flat_md",
        "incident-response/SKILL.md": "ok",
        "leaky/SKILL.md": "escapes_root",
        "linked/SKILL.md": "escapes_root",
        "notes.md": "flat_md",
        "piped/SKILL.md": "parse_error",
        "team-b/incident-response/SKILL.md": "ok",
    }


def test_good_skills_are_read_completely(tree: Path) -> None:
    found = _scan(tree)
    incident = found["incident-response/SKILL.md"].bundle
    assert incident is not None
    assert incident.slug == "incident-response"
    assert (incident.source, incident.source_ref) == (
        "import-skill-md",
        str(tree / "incident-response"),
    )
    assert {c.logical_path for c in incident.components or ()} == {
        "scripts/triage.py",
        "references/severity-matrix.md",
        "references/runbooks/db/failover.md",
        "templates/postmortem.md",
        "examples/sev1-timeline.md",
    }
    disk = found["disk-usage/skill.json"].bundle
    assert disk is not None
    assert (disk.slug, disk.source) == ("disk-usage", "import-skill-json")


def test_broken_entries_say_why(tree: Path) -> None:
    found = _scan(tree)
    assert "is not valid JSON" in found["broken/skill.json"].message
    assert "malformed" in found["bad-yaml/SKILL.md"].message
    assert "feed.md is not a regular file" in found["piped/SKILL.md"].message
    assert str(tree.parent / "outside" / "secret.txt") in found["leaky/SKILL.md"].message
    assert found["leaky/SKILL.md"].bundle is None


def test_log_lines_and_duplicates(tree: Path) -> None:
    entries = directory_scan([tree], allowed_roots=[tree.parent])
    lines = [format_log_line(entry, outcome) for entry, outcome in directory_outcomes(entries)]
    assert f"registered incident-response from {tree}/incident-response/SKILL.md" in lines
    assert f"registered disk-usage from {tree}/disk-usage/skill.json" in lines
    assert (
        f"skipped duplicate incident-response at {tree}/team-b/incident-response/SKILL.md" in lines
    )
    assert any(line.startswith(f"parse error at {tree}/broken/skill.json: ") for line in lines)
    assert any(line.startswith(f"escapes root: {tree}/linked/SKILL.md (") for line in lines)
    assert f"warning: flat markdown file {tree}/notes.md; move it to {tree}/notes/SKILL.md" in lines
    assert (
        f"warning: flat markdown file {tree}/drafts/skill.md; move it to {tree}/drafts/SKILL.md"
        in lines
    )
    assert len(lines) == 10
    assert sum(line.startswith("registered ") for line in lines) == 2


def test_a_bad_root_is_logged_and_skipped_and_the_rest_load(tree: Path, tmp_path: Path) -> None:
    (tree / "notes.txt").write_text("not a folder")
    bad = [
        Path("skills"),  # relative
        tmp_path / "missing",
        tree / "linked",  # resolves outside the allowed root
        tree / "notes.txt",
    ]
    entries = list(directory_scan([*bad, tree / "incident-response"], allowed_roots=[tree]))
    assert [(e.path, e.status) for e in entries[:4]] == [
        (bad[0], "bad_root"),
        (bad[1], "missing_root"),
        (bad[2], "bad_root"),
        (bad[3], "bad_root"),
    ]
    assert "not an absolute path" in entries[0].message
    assert "not inside an allowed root" in entries[2].message
    assert "is not a directory" in entries[3].message
    assert format_log_line(entries[1]) == (
        f"skipped missing root {tmp_path / 'missing'}: it does not exist."
    )
    assert [(e.status, e.bundle.slug if e.bundle else None) for e in entries[4:]] == [
        ("ok", "incident-response")
    ]
    (only,) = directory_scan([tree], allowed_roots=[])
    assert only.status == "bad_root"
    assert "none configured" in only.message


def test_roots_split_on_commas_and_colons(tmp_path: Path) -> None:
    assert split_roots([f"{tmp_path}/a,{tmp_path}/b:{tmp_path}/c", " /d , ", "/e::"]) == [
        tmp_path / "a",
        tmp_path / "b",
        tmp_path / "c",
        Path("/d"),
        Path("/e"),
    ]


def test_several_roots_are_walked_in_order(tree: Path, tmp_path: Path) -> None:
    second = tmp_path / "more"
    shutil.copytree(FIXTURES / "query-promql", second / "query-promql")
    entries = list(directory_scan([second, tree / "disk-usage"], allowed_roots=[tmp_path]))
    assert [(e.status, e.bundle.slug if e.bundle else None) for e in entries] == [
        ("ok", "query-promql"),
        ("ok", "disk-usage"),
    ]
