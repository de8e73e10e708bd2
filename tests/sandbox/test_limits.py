"""Scripts that misbehave are stopped at a bound, with a clear error (real bubblewrap)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from skills_app.sandbox import SandboxLimits, SandboxResult, run_script
from tests.sandbox.helpers import host_pids_with, orphaned_bwraps, run_python

pytestmark = pytest.mark.services

OK_SOURCE = "import json, sys\njson.dump({'ok': True, 'args': json.load(sys.stdin)}, sys.stdout)\n"


def assert_next_run_works(bwrap: str) -> None:
    result = run_python(bwrap, OK_SOURCE, args={"after": "failure"})
    assert result.ok, result
    assert result.result == {"ok": True, "args": {"after": "failure"}}


def test_a_script_that_never_ends_is_killed_with_its_children(bwrap: str) -> None:
    marker = f"xmemo-marker-{uuid.uuid4().hex}"
    source = f"""
import subprocess, sys
subprocess.Popen(["/bin/sh", "-c", "sleep 60; :", "{marker}"])
print("child started", file=sys.stderr, flush=True)
while True:
    pass
"""
    log_lines: list[str] = []
    seen_alive: list[int] = []
    running = threading.Event()
    running.set()

    def watch() -> None:
        # While the sandbox runs, the child must show up on the host... (polled from a thread
        # of its own: a check made from the log callback could run only after the kill when
        # the machine is busy, and then wrongly find nothing)
        while running.is_set() and not seen_alive:
            seen_alive.extend(host_pids_with(marker))
            time.sleep(0.01)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    started = time.monotonic()
    try:
        result = run_python(bwrap, source, timeout_seconds=1, on_log=log_lines.append)
    finally:
        elapsed = time.monotonic() - started
        running.clear()
        watcher.join()

    assert not result.ok
    assert result.error_code == "TIMEOUT"
    assert result.error_message == "The script did not finish within 1 s and was killed."
    assert result.stderr_tail == "child started\n"
    assert 1 <= elapsed < 3
    assert log_lines == ["child started"]
    assert seen_alive, "the child never ran"
    # ...and be gone, with everything else in the sandbox, when run_script returns.
    assert list(host_pids_with(marker)) == []
    assert_next_run_works(bwrap)


def test_a_script_that_closes_its_pipes_and_lingers_still_times_out(bwrap: str) -> None:
    source = "import os, time\nos.close(1)\nos.close(2)\ntime.sleep(60)\n"
    result = run_python(bwrap, source, timeout_seconds=1)
    assert result.error_code == "TIMEOUT"


def test_a_flood_of_output_is_cut_at_the_bound(bwrap: str) -> None:
    source = "import sys\nfor _ in range(100):\n    sys.stdout.write('x' * 1_000_000)\n"
    started = time.monotonic()
    result = run_python(bwrap, source, timeout_seconds=10)
    assert time.monotonic() - started < 5
    assert result.error_code == "OUTPUT_LIMIT"
    assert result.error_message == (
        "The script wrote more than 1048576 bytes to stdout and was killed."
    )
    assert_next_run_works(bwrap)


def test_the_output_bound_is_configurable_and_exact(bwrap: str) -> None:
    limits = SandboxLimits(output_bytes=64)
    fits = '{"pad": "' + "x" * 50 + '"}'
    assert len(fits) <= 64
    assert run_python(bwrap, f"print({fits!r}, end='')", limits=limits).ok
    too_big = run_python(bwrap, f"print({fits!r} + ' ' * 10, end='')", limits=limits)
    assert too_big.error_code == "OUTPUT_LIMIT"


def test_a_huge_allocation_fails_at_the_memory_bound(bwrap: str) -> None:
    result = run_python(bwrap, "buffer = bytearray(4 * 1024 ** 3)\nprint('{}')\n")
    assert result.error_code == "MEMORY_LIMIT"
    assert result.error_message == (
        "The script ran out of memory (limit 536870912 bytes per process)."
    )
    assert result.exit_code == 1
    assert "MemoryError" in result.stderr_tail
    assert_next_run_works(bwrap)


def test_cpu_time_is_bounded(bwrap: str) -> None:
    result = run_python(
        bwrap, "while True:\n    pass\n", timeout_seconds=10, limits=SandboxLimits(cpu_seconds=1)
    )
    assert result.error_code == "CPU_LIMIT"
    assert result.duration < 5


@contextmanager
def peak_processes(marker: str) -> Iterator[list[int]]:
    """Sample, from the host, how many processes carry ``marker`` while the block runs."""
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            peak[0] = max(peak[0], len(list(host_pids_with(marker))))

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        yield peak
    finally:
        done.set()
        sampler.join()


def test_a_fork_bomb_is_contained(bwrap: str) -> None:
    # Every forked copy keeps the entry's path, and so the marker, in its command line.
    marker = f"bomb_{uuid.uuid4().hex}"
    source = (
        b"import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    )
    started = time.monotonic()
    with peak_processes(marker) as peak:
        result: SandboxResult = run_script(
            files={f"{marker}.py": source},
            entry=f"{marker}.py",
            args={},
            timeout_seconds=1.5,
            limits=SandboxLimits(max_processes=32),
            bwrap_path=bwrap,
        )
    assert result.error_code == "TIMEOUT"
    assert time.monotonic() - started < 4
    assert 1 < peak[0] <= 32
    assert list(host_pids_with(marker)) == []
    assert_next_run_works(bwrap)


def test_a_failing_script_reports_its_exit_code_and_stderr(bwrap: str) -> None:
    source = "import sys\nprint('cannot reach the disk', file=sys.stderr)\nsys.exit(3)\n"
    result = run_python(bwrap, source)
    assert (result.ok, result.error_code, result.exit_code) == (False, "SCRIPT_FAILED", 3)
    assert result.error_message == "The script exited with code 3."
    assert result.stderr_tail == "cannot reach the disk\n"


def test_a_script_killed_by_a_signal_says_so(bwrap: str) -> None:
    result = run_python(bwrap, "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n")
    assert (result.error_code, result.exit_code) == ("SCRIPT_FAILED", 128 + 15)
    assert result.error_message == "The script was killed by signal 15."


@pytest.mark.parametrize(
    "stdout",
    ["not json", '{"a": 1}{"b": 2}', '{"a": 1}\n{"b": 2}\n', "[1, 2, 3]", "", '{"x": NaN}'],
)
def test_stdout_that_is_not_one_json_object_is_a_protocol_error(bwrap: str, stdout: str) -> None:
    result = run_python(bwrap, f"import sys\nsys.stdout.write({stdout!r})\n")
    assert (result.ok, result.error_code, result.exit_code) == (False, "PROTOCOL_ERROR", 0)
    assert result.error_message is not None
    assert result.error_message.startswith("Protocol error: ")


def test_stderr_is_streamed_line_by_line_while_the_script_runs(bwrap: str) -> None:
    source = (
        "import sys, time\n"
        "print('step 1', file=sys.stderr, flush=True)\n"
        "time.sleep(0.5)\n"
        "sys.stderr.write('step 2\\r\\n' + 'y' * 10000 + '\\npartial')\n"
        "print('{}')\n"
    )
    seen: list[tuple[str, float]] = []
    started = time.monotonic()
    result = run_python(bwrap, source, on_log=lambda line: seen.append((line, time.monotonic())))
    assert result.ok, result
    # CRLF is trimmed, a line longer than 4096 bytes is split, a last unterminated line kept.
    long_line = ["y" * 4096, "y" * 4096, "y" * 1808]
    assert [line for line, _ in seen] == ["step 1", "step 2", *long_line, "partial"]
    assert seen[0][1] - started < seen[1][1] - started - 0.3  # step 1 arrived before the sleep


def test_the_log_is_capped_but_the_tail_keeps_the_end(bwrap: str) -> None:
    source = (
        "import sys\n"
        "for n in range(200):\n"
        "    print(f'line {n:03d} ' + 'x' * 90, file=sys.stderr)\n"
        "print('{}')\n"
    )
    logs: list[str] = []
    result = run_python(bwrap, source, on_log=logs.append, limits=SandboxLimits(log_bytes=1000))
    assert result.ok, result
    assert logs[0].startswith("line 000 ")
    assert logs[-1].startswith("[log truncated")
    assert sum(len(line) + 1 for line in logs[:-1]) <= 1000
    assert result.stderr_tail.endswith("line 199 " + "x" * 90 + "\n")
    assert len(result.stderr_tail.encode()) <= 4096


def test_a_script_that_ignores_large_args_still_runs(bwrap: str) -> None:
    result = run_python(bwrap, "print('{\"ignored\": true}')\n", args={"blob": "x" * 1_000_000})
    assert result.result == {"ignored": True}


def test_runs_in_parallel_do_not_disturb_each_other(bwrap: str) -> None:
    results: list[SandboxResult] = []

    def run(n: int) -> None:
        results.append(run_python(bwrap, OK_SOURCE, args={"n": n}))

    threads = [threading.Thread(target=run, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r.result["args"]["n"] for r in results if r.result) == [0, 1, 2, 3]


def test_no_sandbox_process_is_left_behind(bwrap: str) -> None:
    before = set(orphaned_bwraps())
    assert run_python(bwrap, OK_SOURCE).ok
    assert run_python(bwrap, "import sys\nsys.exit(2)\n").error_code == "SCRIPT_FAILED"
    assert run_python(bwrap, "while True:\n    pass\n", timeout_seconds=0.5).error_code == "TIMEOUT"
    assert set(orphaned_bwraps()) - before == set()
