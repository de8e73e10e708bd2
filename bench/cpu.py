"""A server's CPU time per request: what its own processes ran, not the wall clock.

On a busy two-core machine, throughput compares whatever ran beside each window as much as the
code paths; the CPU time the kernel charged to the server's processes (gunicorn's master and
workers, read from ``/proc/PID/task/TID/schedstat`` in nanoseconds: ``/proc/PID/stat`` counts
10 ms ticks) divided by the requests answered moves far less with the neighbours."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

_PROC = Path("/proc")


@dataclass(frozen=True)
class Reading:
    """The CPU nanoseconds of a process tree so far, and which processes it was."""

    nanoseconds: int
    pids: frozenset[int]


def _parent(pid: int) -> int | None:
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: the parent comes after.
    return int(text[text.rindex(")") + 2 :].split()[1])


def _run_ns(pid: int) -> int:
    """The nanoseconds all threads of ``pid`` have run (0 once it is gone)."""
    total = 0
    try:
        tasks = list((_PROC / str(pid) / "task").iterdir())
    except OSError:
        return 0
    for task in tasks:
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended between the listing and the read
    return total


def read(pid: int) -> Reading:
    """Process ``pid`` (a gunicorn master, say) and its live children, now."""
    if _parent(pid) is None:
        raise ProcessLookupError(pid)
    children = [
        int(entry.name)
        for entry in _PROC.iterdir()
        if entry.name.isdigit() and _parent(int(entry.name)) == pid
    ]
    pids = frozenset([pid, *children])
    return Reading(sum(_run_ns(p) for p in pids), pids)


def spent(before: Reading, after: Reading) -> float | None:
    """CPU seconds between two readings of one tree; None when a process came or went between
    them (a worker restarted: what it ran is not in both sums)."""
    if before.pids != after.pids:
        return None
    return (after.nanoseconds - before.nanoseconds) / 1e9
