from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from skills_app.models import AuditEntry, Skill
from tests.factories import Env
from tests.formats.helpers import FIXTURES


def _tree(root: Path, outside: Path) -> None:
    shutil.copytree(FIXTURES / "incident-response", root / "incident-response")
    shutil.copytree(FIXTURES / "disk-usage", root / "tools" / "disk-usage")
    shutil.copytree(
        FIXTURES / "incident-response", root / "copies" / "incident-response"
    )  # duplicate
    (root / "broken").mkdir()
    (root / "broken" / "SKILL.md").write_text("---\nname: [oops\n---\nbody")
    (outside / "secret").mkdir(parents=True)
    (outside / "secret" / "SKILL.md").write_text("---\nname: secret\ndescription: s\n---\nnope")
    (root / "linked").symlink_to(outside / "secret", target_is_directory=True)
    (root / "notes.md").write_text("# a flat file")


def test_directory_loader_registers_good_skills_and_logs_the_rest(
    env: Env, tmp_path: Path, settings
) -> None:
    root, outside = tmp_path / "skills", tmp_path / "outside"
    root.mkdir()
    _tree(root, outside)
    settings.XMEMO_IMPORT_DIR_ROOTS = [str(tmp_path / "skills")]
    out = io.StringIO()
    call_command("import_skills_dir", str(root), "--workspace", env.personal.slug, stdout=out)
    lines = out.getvalue().splitlines()
    assert sorted(Skill.objects.filter(workspace=env.personal).values_list("slug", flat=True)) == [
        "disk-usage",
        "incident-response",
    ]
    assert sum(line.startswith("registered ") for line in lines) == 2
    assert sum(line.startswith("skipped duplicate incident-response") for line in lines) == 1
    assert any(line.startswith("parse error at") and "broken" in line for line in lines)
    assert any(line.startswith("escapes root:") and "linked" in line for line in lines)
    assert any("flat markdown file" in line and "notes/SKILL.md" in line for line in lines)
    assert lines[-1] == "2 skill(s) registered from 6 manifest(s)."
    assert not Skill.objects.filter(slug="secret").exists()


def test_roots_outside_the_allowlist_are_refused(env: Env, tmp_path: Path, settings) -> None:
    settings.XMEMO_IMPORT_DIR_ROOTS = [str(tmp_path / "allowed")]
    (tmp_path / "allowed").mkdir()
    with pytest.raises(CommandError):
        call_command(
            "import_skills_dir",
            str(tmp_path),
            "--workspace",
            env.personal.slug,
            stdout=io.StringIO(),
        )
    assert not Skill.objects.exists()


def test_one_bad_root_never_stops_the_rest(env: Env, tmp_path: Path, settings) -> None:
    root = tmp_path / "skills"
    shutil.copytree(FIXTURES / "incident-response", root / "a" / "incident-response")
    shutil.copytree(FIXTURES / "disk-usage", root / "b" / "disk-usage")
    settings.XMEMO_IMPORT_DIR_ROOTS = [str(root)]
    out = io.StringIO()
    call_command(
        "import_skills_dir",
        f"relative/path,{root / 'missing'}:{root / 'a'}",
        str(root / "b"),
        "--workspace",
        env.personal.slug,
        stdout=out,
    )
    lines = out.getvalue().splitlines()
    assert "skipped root relative/path: relative/path is not an absolute path." in lines
    assert f"skipped missing root {root / 'missing'}: it does not exist." in lines
    assert sorted(Skill.objects.filter(workspace=env.personal).values_list("slug", flat=True)) == [
        "disk-usage",
        "incident-response",
    ]
    assert lines[-1] == "2 skill(s) registered from 2 manifest(s)."


def test_missing_roots_are_skipped_so_a_fresh_install_boots(
    env: Env, tmp_path: Path, settings
) -> None:
    """docs/contract.md §8: a root that does not exist is skipped with a log line; when every
    root is missing the command still succeeds (exit 0) and registers nothing."""
    settings.XMEMO_IMPORT_DIR_ROOTS = [str(tmp_path)]
    missing = [tmp_path / "etc" / "skills", tmp_path / "opt" / "skills"]
    out = io.StringIO()
    call_command(
        "import_skills_dir", *map(str, missing), "--workspace", env.personal.slug, stdout=out
    )
    lines = out.getvalue().splitlines()
    assert lines == [
        *(f"skipped missing root {root}: it does not exist." for root in missing),
        "0 skill(s) registered from 0 manifest(s).",
    ]
    assert not Skill.objects.exists()
    assert not AuditEntry.objects.filter(action="skills.import.directory").exists()


def test_a_root_that_exists_but_is_refused_still_fails_when_nothing_else_walks(
    env: Env, tmp_path: Path, settings
) -> None:
    settings.XMEMO_IMPORT_DIR_ROOTS = [str(tmp_path / "allowed")]
    (tmp_path / "elsewhere").mkdir()
    out = io.StringIO()
    with pytest.raises(CommandError, match="None of the roots can be walked"):
        call_command(
            "import_skills_dir",
            str(tmp_path / "allowed" / "missing"),
            str(tmp_path / "elsewhere"),
            "--workspace",
            env.personal.slug,
            stdout=out,
        )
    lines = out.getvalue().splitlines()
    assert (
        lines[0] == f"skipped missing root {tmp_path / 'allowed' / 'missing'}: it does not exist."
    )
    assert lines[1].startswith(f"skipped root {tmp_path / 'elsewhere'}: ")
    assert "not inside an allowed root" in lines[1]
