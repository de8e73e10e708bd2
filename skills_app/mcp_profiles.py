"""Client profiles: reads ``config/mcp-documentation-contract.json``, the only place that decides
which MCP tools, prompts and resources each client profile sees (docs/contract.md §12, §18).

Neutral ground: tokens (services), the console's token forms, REST and MCP all name profiles, so
they live here rather than in the MCP door.
"""

from __future__ import annotations

import json
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.conf import settings

# The profile a token gets when none is named: every tool the server implements.
DEFAULT_PROFILE = "ordinary-full"
# An edit of the contract file is seen within this long: the file is not stat()ed on every
# call (every MCP request reads the contract several times).
RECHECK_SECONDS = 1.0
_seen: dict[Any, tuple[float, float]] = {}  # the setting -> (when checked, its mtime then)


@lru_cache(maxsize=4)
def _load(setting: str | Path, mtime: float) -> dict[str, Any]:
    with Path(setting).open(encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


def contract() -> dict[str, Any]:
    setting = settings.XMEMO_MCP_CONTRACT
    now = time.monotonic()
    checked, mtime = _seen.get(setting, (float("-inf"), 0.0))
    if now - checked >= RECHECK_SECONDS:
        mtime = Path(setting).stat().st_mtime
        _seen[setting] = (now, mtime)
    return _load(setting, mtime)


def profile_names() -> tuple[str, ...]:
    return tuple(contract()["profiles"])


def tools_for_profile(profile: str) -> list[str]:
    """Tool names a client profile may see and call; unknown profiles see nothing."""
    return list(contract()["profiles"].get(profile, []))


def exposed_tools(profile: str) -> list[str]:
    """The profile's tools that the contract also defines, in the profile's order.

    A profile naming a tool the contract does not describe exposes nothing for that name:
    without a description and an input schema there is nothing to advertise or validate.
    """
    defined = contract()["tools"]
    return [name for name in tools_for_profile(profile) if name in defined]


def profile_label(profile: str) -> str:
    """What choosing ``profile`` gives a client, for the forms that offer profiles."""
    tools = exposed_tools(profile)
    if not tools:
        return f"{profile} — no MCP tools; use the REST API / bridge"
    listed = ", ".join(f"{name} ({tool_spec(name)['access']})" for name in tools)
    return f"{profile} — MCP tools: {listed}"


def profile_choices() -> list[tuple[str, str]]:
    """Every profile as a form choice with its label, the default first."""
    names = sorted(profile_names(), key=lambda name: name != DEFAULT_PROFILE)
    return [(name, profile_label(name)) for name in names]


def tool_spec(name: str) -> dict[str, Any]:
    spec: dict[str, Any] = contract()["tools"][name]
    return spec


SURFACES = ("prompts", "resources")


def profile_sees(profile: str, surface: str) -> bool:
    """Whether a client profile sees MCP ``surface`` ("prompts" or "resources"); profiles the
    contract's ``surfaces`` does not list see neither."""
    assert surface in SURFACES
    entry = contract().get("surfaces", {}).get("profiles", {}).get(profile, {})
    return bool(entry.get(surface, False))


def exposed_surfaces(profile: str) -> set[str]:
    """What the profile exposes besides tools: a subset of ``SURFACES``."""
    return {surface for surface in SURFACES if profile_sees(profile, surface)}


def profile_with_tools(preferred: str) -> str:
    """``preferred`` if it exposes an MCP tool, else ``DEFAULT_PROFILE``: a client that calls
    tools is never pointed at a profile that shows it nothing (docs/contract.md §17)."""
    return preferred if exposed_tools(preferred) else DEFAULT_PROFILE


SKILLS_EXTENSION = "io.modelcontextprotocol/skills"


def profile_extensions(profile: str) -> dict[str, dict[str, Any]]:
    """The MCP extensions declared to a client profile (identifier -> settings): those of the
    contract's ``extensions`` that list the profile. Every extension here serves files, so a
    profile that does not see resources is declared none."""
    if not profile_sees(profile, "resources"):
        return {}
    return {
        identifier: dict(spec.get("settings", {}))
        for identifier, spec in contract().get("extensions", {}).items()
        if isinstance(spec, dict) and profile in spec.get("profiles", {})
    }


def published_only(profile: str) -> bool:
    """Whether the profile reads published revisions only (``chatgpt-public``, §20)."""
    entry = contract().get("surfaces", {}).get("profiles", {}).get(profile, {})
    return bool(entry.get("published_only", False))
