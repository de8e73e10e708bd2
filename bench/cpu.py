"""A server's CPU time, for cost per request: what its processes spent, not the wall clock.

Two scenarios compared by throughput on a busy two-core machine compare whatever else ran
beside each window as much as the code paths (a cost ratio of 0.85 was printed for a change
that can only add work). The CPU time the server's own processes used, divided by the requests
they answered in the same window, moves far less with the neighbours: it is what the kernel
charged to those processes (``/proc/PID/stat``, Linux), wherever the load generator and the rest
of the machine were.
"""

from __future__ import annotations

import os
from pathlib import Path

_PROC = Path("/proc")
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` from the third (state) on, or None once it is gone."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: split after it.
    return text[text.rindex(")") + 2 :].split()


def _children(pid: int) -> list[int]:
    found = []
    for entry in _PROC.iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None and fields[1] == str(pid):
                found.append(int(entry.name))
    return found


def tree_seconds(pid: int) -> float:
    """User plus system CPU seconds of process ``pid`` (a gunicorn master, say) and its live
    children so far, plus the children it has reaped: a worker that exits between two readings
    moves its time into its parent's ``cutime``, so the sum does not go back."""
    own = _stat(pid)
    if own is None:
        raise ProcessLookupError(pid)
    # utime, stime, cutime, cstime are fields 14-17 of the stat line.
    ticks = sum(int(value) for value in own[11:15])
    for child in _children(pid):
        fields = _stat(child)
        if fields is not None:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / _TICK
