"""Reads ``config/mcp-documentation-contract.json``: the only place that decides which MCP
tools each client profile sees (SPEC §12)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.conf import settings


@lru_cache(maxsize=4)
def _load(path: Path, mtime: float) -> dict[str, Any]:
    with path.open(encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


def contract() -> dict[str, Any]:
    path = Path(settings.XMEMO_MCP_CONTRACT)
    return _load(path, path.stat().st_mtime)


def profile_names() -> tuple[str, ...]:
    return tuple(contract()["profiles"])


def tools_for_profile(profile: str) -> list[str]:
    """Tool names a client profile may see and call; unknown profiles see nothing."""
    return list(contract()["profiles"].get(profile, []))


def tool_spec(name: str) -> dict[str, Any]:
    spec: dict[str, Any] = contract()["tools"][name]
    return spec
