"""Running small test scripts through the real runner."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from skills_app.sandbox import SandboxResult, run_script


def run_python(bwrap: str, source: str, **kwargs: Any) -> SandboxResult:
    """Run ``source`` as ``main.py`` with ``args`` (default {}) and a 5 s timeout by default."""
    kwargs.setdefault("args", {})
    kwargs.setdefault("timeout_seconds", 5)
    return run_script(
        files={"main.py": source.encode()}, entry="main.py", bwrap_path=bwrap, **kwargs
    )


def host_pids_with(marker: str) -> Iterator[int]:
    """Host processes whose command line contains ``marker``."""
    needle = marker.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                if needle in handle.read():
                    yield int(name)
        except OSError:  # the process is gone already
            continue


def orphaned_bwraps() -> list[int]:
    """bwrap processes left to init: what a sandbox leaves behind if nobody reaps its PID 1."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as handle:
                fields = dict(line.split(":", 1) for line in handle if ":" in line)
        except OSError:
            continue
        if fields["Name"].strip() == "bwrap" and fields["PPid"].strip() == "1":
            found.append(int(name))
    return found
