"""The contract file is read once and re-checked for edits at most once per RECHECK_SECONDS."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from skills_app import mcp_profiles


@pytest.fixture
def contract_file(tmp_path: Path, settings: Any) -> Path:
    data = json.loads(Path(settings.XMEMO_MCP_CONTRACT).read_text(encoding="utf-8"))
    path = tmp_path / "contract.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    settings.XMEMO_MCP_CONTRACT = path
    return path


def _edit(path: Path, profile: list[str]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data["profiles"]["claude-code"] = profile
    path.write_text(json.dumps(data), encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a later mtime, surely


def test_the_file_is_not_stated_on_every_call(
    contract_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mcp_profiles.exposed_tools("claude-code")
    stats = []
    original = Path.stat

    def counting(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self == contract_file:
            stats.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", counting)
    for _ in range(50):
        mcp_profiles.exposed_tools("claude-code")
    assert stats == []


def test_an_edit_in_place_is_seen_after_the_recheck_interval(
    contract_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(mcp_profiles.time, "monotonic", lambda: clock[0])
    mcp_profiles._seen.clear()
    before = mcp_profiles.tools_for_profile("claude-code")
    _edit(contract_file, ["recall_cloud_skill"])
    clock[0] += mcp_profiles.RECHECK_SECONDS / 2
    assert mcp_profiles.tools_for_profile("claude-code") == before
    clock[0] += mcp_profiles.RECHECK_SECONDS
    assert mcp_profiles.tools_for_profile("claude-code") == ["recall_cloud_skill"]
    assert before != ["recall_cloud_skill"]


def test_another_file_is_read_at_once(contract_file: Path, settings: Any, tmp_path: Path) -> None:
    mcp_profiles.tools_for_profile("claude-code")
    other = tmp_path / "other.json"
    other.write_text(contract_file.read_text(encoding="utf-8"), encoding="utf-8")
    _edit(other, ["save_cloud_skill"])
    settings.XMEMO_MCP_CONTRACT = other
    assert mcp_profiles.tools_for_profile("claude-code") == ["save_cloud_skill"]


def test_every_profile_is_offered_with_what_it_exposes_default_first(contract_file: Path) -> None:
    """Issue 25 #18: profiles were bare names, and two of them expose no tool at all. The
    choice labels come from the contract file, so an edit of the file shows in them."""
    default = mcp_profiles.DEFAULT_PROFILE
    data = json.loads(contract_file.read_text(encoding="utf-8"))
    data["profiles"] = {"reader": ["recall_cloud_skill", "nope"], default: [], "none": []}
    contract_file.write_text(json.dumps(data), encoding="utf-8")
    mcp_profiles._seen.clear()
    assert mcp_profiles.profile_choices() == [
        (default, f"{default} — no MCP tools; use the REST API / bridge"),
        ("reader", "reader — MCP tools: recall_cloud_skill (read)"),
        ("none", "none — no MCP tools; use the REST API / bridge"),
    ]
