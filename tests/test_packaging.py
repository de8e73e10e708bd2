"""The lock files (requirements/, ``make lock``) hold every dependency pyproject.toml names.

``make install``, CI and the docker image install only what the lock files pin, with
``--require-hashes``; a dependency added to pyproject.toml, or a range moved past its pin, without
``make lock`` would otherwise surface on a fresh machine as an import error or an unlocked
version. These tests read the files, not the environment they run in.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements" / "lock.txt"
RUNTIME_LOCK = ROOT / "requirements" / "runtime.txt"
# One pinned requirement: the name, ==, the version, then at least one sha256 hash.
PINNED = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>\S+)"
    r"(?: \\\n\s+--hash=sha256:[0-9a-f]{64})+",
    re.MULTILINE,
)


def _project() -> dict[str, list[str]]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {"runtime": data["dependencies"], "dev": data["optional-dependencies"]["dev"]}


def _pins(path: Path) -> dict[str, str]:
    text = path.read_text(encoding="utf-8")
    pins: dict[str, str] = {
        canonicalize_name(m["name"]): m["version"] for m in PINNED.finditer(text)
    }
    # Every requirement line (not a comment, not a hash continuation) is one of those pins.
    lines = [line for line in text.splitlines() if line and not line[0].isspace()]
    requirement_lines = [line for line in lines if not line.startswith("#")]
    assert len(requirement_lines) == len(pins), (
        f"{path.name}: a requirement without ==VERSION and --hash; run `make lock`"
    )
    return pins


def _extras_requirements(requirement: Requirement) -> list[Requirement]:
    """What the requirement's extras add (``psycopg[binary,pool]``: psycopg-binary and
    psycopg-pool), from the installed distribution's metadata."""
    if not requirement.extras:
        return []
    try:
        declared = metadata.requires(requirement.name) or []
    except metadata.PackageNotFoundError:  # not installed: its own absence is reported
        return []
    added = []
    for line in declared:
        extra_requirement = Requirement(line)
        marker = extra_requirement.marker
        if marker is None or marker.evaluate({"extra": ""}):
            continue  # not brought by an extra
        if any(marker.evaluate({"extra": extra}) for extra in requirement.extras):
            added.append(extra_requirement)
    return added


@pytest.mark.parametrize(
    ("group", "lock"),
    [("runtime", LOCK), ("dev", LOCK), ("runtime", RUNTIME_LOCK)],
    ids=["runtime-in-lock", "dev-in-lock", "runtime-in-runtime-lock"],
)
def test_every_dependency_is_pinned_with_hashes_inside_its_range(group: str, lock: Path) -> None:
    pins = _pins(lock)
    problems = []
    for line in _project()[group]:
        requirement = Requirement(line)
        for needed in [requirement, *_extras_requirements(requirement)]:
            name = canonicalize_name(needed.name)
            version = pins.get(name)
            if version is None:
                problems.append(f"{needed.name} is not in {lock.name}")
            elif not needed.specifier.contains(version, prereleases=True):
                problems.append(f"{needed.name}=={version} is outside {needed.specifier}")
    assert not problems, "; ".join(problems) + " — run `make lock` (docs/operations.md)"


def test_the_runtime_lock_pins_what_the_full_lock_pins() -> None:
    """The docker image (runtime lock) runs the versions CI tested (full lock)."""
    full, runtime = _pins(LOCK), _pins(RUNTIME_LOCK)
    differing = {
        name: (version, full.get(name))
        for name, version in runtime.items()
        if full.get(name) != version
    }
    assert not differing, f"runtime lock differs from the full lock: {differing}; run `make lock`"


def test_the_pin_parser_sees_a_pin_without_hashes() -> None:
    """The check above could fail: a line without hashes is not counted as a pin."""
    text = "django==5.2.1\nnumpy==2.0.0 \\\n    --hash=sha256:" + "0" * 64 + "\n"
    assert {m["name"] for m in PINNED.finditer(text)} == {"numpy"}


def test_every_install_installs_from_a_lock_and_the_project_without_resolving() -> None:
    """make install (and so CI) and the image take versions from the lock files only."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    stamp_rule = makefile.split("$(STAMP):", 1)[1].split("\n\n", 1)[0]
    assert "--require-hashes -r $(LOCK)" in stamp_rule
    assert re.search(r"pip install .*--no-deps -e \.$", stamp_rule, re.MULTILINE)
    assert "LOCK := requirements/lock.txt" in makefile
    assert "make install" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text(encoding="utf-8")
    assert "--require-hashes -r requirements/runtime.txt" in dockerfile
    assert re.search(r"pip install [^\n]*--no-deps \. ", dockerfile)
