"""skill.json: strict validation of the subprocess manifest, and the bundle it becomes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from skills_app.errors import ValidationFailed
from skills_app.formats.skilljson import skill_json_bundle_read
from tests.formats.helpers import FIXTURES, folder_files

VALID: dict[str, Any] = {
    "name": "disk_cleaner",
    "description": "Free up disk by clearing stale build caches and journals.",
    "schema": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "dry_run": {"type": "boolean"}},
        "required": ["path"],
    },
    "entry": "run.sh",
    "env_allow": ["PATH", "HOME"],
    "timeout_seconds": 60,
    "class": "mutating",
    "category": "ops",
}
FILES = {"run.sh": b"#!/bin/sh\necho '{}'\n"}


def _read(manifest: Any, files: dict[str, bytes] | None = FILES) -> Any:
    return skill_json_bundle_read(
        json.dumps(manifest).encode(), files=files, filename="cleaner/skill.json"
    )


def test_valid_manifest_becomes_a_skill_with_a_script_component() -> None:
    bundle = _read(VALID, files={**FILES, "lib/util.sh": b"helper() { :; }\n"})
    assert bundle.slug == "disk-cleaner"
    assert (bundle.name, bundle.description) == (VALID["name"], VALID["description"])
    assert bundle.source == "import-skill-json"
    assert bundle.frontmatter == {
        k: v for k, v in VALID.items() if k not in ("name", "description")
    }
    assert [(c.logical_path, c.type) for c in bundle.components] == [
        ("lib/util.sh", "document"),
        ("run.sh", "script"),
    ]
    body = bundle.instruction_body
    assert body.startswith("# disk_cleaner\n\nFree up disk")
    assert "`run.sh`" in body
    assert "Class: `mutating`" in body
    assert "Timeout: 60 seconds" in body
    assert "`PATH`, `HOME`" in body
    assert '"dry_run"' in body  # the arguments schema is spelled out


def test_defaults_are_explained_not_invented() -> None:
    minimal = {"name": "ping", "description": "Ping a host.", "entry": "run.sh"}
    bundle = _read(minimal)
    assert bundle.frontmatter == {"entry": "run.sh"}  # lossless: nothing added
    assert "Class: `safe`" in bundle.instruction_body
    assert "Category: `external`" in bundle.instruction_body
    assert "Timeout: 30 seconds" in bundle.instruction_body
    assert "none (not even `PATH`)" in bundle.instruction_body


def test_zero_timeout_means_the_default_and_unknown_fields_are_kept() -> None:
    bundle = _read(VALID | {"timeout_seconds": 0, "x-owner": "platform", "version": 3})
    assert bundle.frontmatter["timeout_seconds"] == 0
    assert bundle.frontmatter["x-owner"] == "platform"
    assert bundle.frontmatter["version"] == 3
    assert "Timeout: 30 seconds" in bundle.instruction_body


def test_fixture_disk_usage() -> None:
    files = folder_files(FIXTURES / "disk-usage")
    manifest = files.pop("skill.json")
    bundle = skill_json_bundle_read(manifest, files=files)
    assert bundle.slug == "disk-usage"
    assert bundle.frontmatter["x-owner"] == "platform-team"
    assert {c.logical_path: c.type for c in bundle.components or ()} == {
        "du.py": "script",
        "lib/__init__.py": "document",
        "lib/humanize.py": "document",
    }


INVALID: list[tuple[str, dict[str, Any]]] = [
    ("name", {"name": None}),
    ("name", {"name": "Disk-Usage"}),
    ("name", {"name": "disk usage"}),
    ("name", {"name": "_disk"}),
    ("name", {"name": "disk__usage"}),
    ("name", {"name": "a" * 65}),
    ("description", {"description": None}),
    ("description", {"description": "   "}),
    ("description", {"description": 42}),
    ("schema", {"schema": "object"}),
    ("schema", {"schema": {"type": "array"}}),
    ("entry", {"entry": None}),
    ("entry", {"entry": "../escape.sh"}),
    ("entry", {"entry": "/usr/bin/rm"}),
    ("entry", {"entry": "bin\\run.exe"}),
    ("env_allow", {"env_allow": "PATH"}),
    ("env_allow", {"env_allow": ["PATH", "1BAD"]}),
    ("env_allow", {"env_allow": ["PATH", 7]}),
    ("timeout_seconds", {"timeout_seconds": -1}),
    ("timeout_seconds", {"timeout_seconds": "30"}),
    ("timeout_seconds", {"timeout_seconds": 1.5}),
    ("timeout_seconds", {"timeout_seconds": True}),
    ("class", {"class": "risky"}),
    ("class", {"class": "SAFE"}),
    ("category", {"category": ""}),
    ("category", {"category": ["ops"]}),
]


@pytest.mark.parametrize(("field", "change"), INVALID, ids=[f"{f}={c[f]!r}" for f, c in INVALID])
def test_invalid_field_is_refused_naming_it(field: str, change: dict[str, Any]) -> None:
    manifest = {k: v for k, v in (VALID | change).items() if v is not None}
    with pytest.raises(ValidationFailed) as caught:
        _read(manifest)
    assert caught.value.details == {"path": "cleaner/skill.json", "field": field}
    assert f"'{field}'" in caught.value.message
    assert caught.value.message.startswith("cleaner/skill.json: ")


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (b'{"name": "x",}', "is not valid JSON"),
        (b"[1, 2]", "must hold a JSON object, not a list"),
        (b'{"name": "a", "name": "b"}', "'name' appears twice"),
        (b'{"timeout_seconds": NaN}', "NaN is not a JSON number"),
        (b'{"description": "\xff"}', "is not valid UTF-8"),
    ],
)
def test_malformed_json_is_refused(data: bytes, named: str) -> None:
    with pytest.raises(ValidationFailed, match=named):
        skill_json_bundle_read(data, files=FILES)


def test_entry_must_be_shipped_with_the_manifest() -> None:
    with pytest.raises(ValidationFailed, match=r"'run\.sh', which is not in the skill folder"):
        _read(VALID, files=None)
    with pytest.raises(ValidationFailed) as caught:
        _read(VALID, files={"other.sh": b""})
    assert caught.value.details["field"] == "entry"
