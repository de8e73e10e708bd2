"""Without a working sandbox nothing runs, and bwrap is the only program ever started."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from skills_app.errors import SandboxUnavailable, ValidationFailed
from skills_app.sandbox import SandboxLimits, SandboxResult, run_script, selftest
from skills_app.sandbox import runner as runner_module

# If this ever ran outside a sandbox it would leave a marker file on the host.
MARKER_SCRIPT = (
    "import json, sys\n"
    "args = json.load(sys.stdin)\n"
    "open(args['marker'], 'w').write('ran')\n"
    "print('{}')\n"
)


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    tmp_path.chmod(0o777)  # writable by anyone, so even an unprivileged escape would leave it
    return tmp_path / "ran.txt"


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every program the code under test starts, by argv[0]; other ways to exec are forbidden."""
    programs: list[str] = []

    class RecordingPopen(subprocess.Popen[bytes]):
        def __init__(self, args: Any, *rest: Any, **kwargs: Any) -> None:
            programs.append(str(args[0]))
            super().__init__(args, *rest, **kwargs)

    def forbidden(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"a program was started without bwrap: {args!r}")

    monkeypatch.setattr(subprocess, "Popen", RecordingPopen)
    for name in ("system", "posix_spawn", "posix_spawnp", "execv", "execve", "execvp", "spawnv"):
        monkeypatch.setattr(os, name, forbidden)
    return programs


def run_marker_script(marker: Path, bwrap_path: str) -> SandboxResult:
    return run_script(
        files={"main.py": MARKER_SCRIPT.encode()},
        entry="main.py",
        args={"marker": str(marker)},
        timeout_seconds=2,
        bwrap_path=bwrap_path,
    )


def test_missing_bwrap_raises_and_runs_nothing(marker: Path, spawned: list[str]) -> None:
    with pytest.raises(SandboxUnavailable, match="not installed") as caught:
        run_marker_script(marker, "/nonexistent/bwrap")
    assert caught.value.code == "SANDBOX_UNAVAILABLE"
    assert not marker.exists()
    assert spawned == []


def test_missing_bwrap_fails_the_selftest() -> None:
    with pytest.raises(SandboxUnavailable):
        selftest("/nonexistent/bwrap")


@pytest.mark.parametrize("impostor", ["/bin/true", "/bin/false"])
def test_a_bwrap_that_cannot_make_a_sandbox_raises_and_runs_nothing(
    marker: Path, spawned: list[str], impostor: str
) -> None:
    # `true` exits 0 without starting anything: an exit status alone proves nothing.
    with pytest.raises(SandboxUnavailable, match="cannot create a sandbox"):
        run_marker_script(marker, impostor)
    assert not marker.exists()
    assert spawned == [impostor]


def test_a_sandbox_that_breaks_after_its_selftest_still_fails_closed(
    marker: Path, spawned: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    program = "/bin/true"
    monkeypatch.setitem(runner_module._selftest_passed_at, program, time.monotonic())
    with pytest.raises(SandboxUnavailable, match="could not start the script"):
        run_marker_script(marker, program)
    assert not marker.exists()
    assert spawned == [program]


@pytest.mark.services
def test_a_real_run_only_ever_starts_bwrap(bwrap: str, marker: Path, spawned: list[str]) -> None:
    result = run_marker_script(marker, bwrap)
    assert spawned
    assert set(spawned) == {shutil.which(bwrap)}
    # The script ran, but inside: the host folder it wanted to write to does not exist there.
    assert result.error_code == "SCRIPT_FAILED"
    assert "FileNotFoundError" in result.stderr_tail
    assert not marker.exists()


@pytest.mark.services
def test_the_components_directory_is_removed_after_the_run(
    bwrap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    created: list[str] = []
    real_mkdtemp = tempfile.mkdtemp

    def recording_mkdtemp(*args: Any, **kwargs: Any) -> str:
        path = real_mkdtemp(*args, **kwargs)
        created.append(path)
        return path

    monkeypatch.setattr(tempfile, "mkdtemp", recording_mkdtemp)
    result = run_script(
        files={"main.py": b"print('{}')\n", "a/b/c.txt": b"c"},
        entry="main.py",
        args={},
        timeout_seconds=2,
        bwrap_path=bwrap,
    )
    assert result.ok, result
    assert created
    assert not any(os.path.exists(path) for path in created)


@pytest.mark.parametrize(
    ("files", "entry", "kwargs", "message"),
    [
        ({"main.py": b""}, "other.py", {}, "not one of the revision's components"),
        ({"../evil.py": b""}, "../evil.py", {}, "not a safe relative path"),
        ({"/abs.py": b""}, "/abs.py", {}, "not a safe relative path"),
        ({"a//b.py": b""}, "a//b.py", {}, "not a safe relative path"),
        ({"a": b"", "a/b.py": b""}, "a/b.py", {}, "both a file and a folder"),
        ({"tool.rb": b"puts 1"}, "tool.rb", {}, "Cannot tell how to run"),
        ({"x": b"#!/usr/bin/ruby-nope\n"}, "x", {}, "is not available in the sandbox"),
        ({"x": b"#!/root/.pyenv/shims/python\n"}, "x", {}, "is not available in the sandbox"),
        ({"x": b"#!/usr/bin/env -S python3 -u\n"}, "x", {}, "must name one program"),
        ({"main.py": b""}, "main.py", {"env_allow": ["BAD-NAME"]}, "invalid variable name"),
        ({"main.py": b""}, "main.py", {"env_allow": "PATH"}, "not a string"),
        ({"main.py": b""}, "main.py", {"args": {"x": float("nan")}}, "not valid JSON"),
        ({"main.py": b""}, "main.py", {"timeout_seconds": 0}, "positive"),
        ({"main.py": b""}, "main.py", {"timeout_seconds": float("inf")}, "positive"),
    ],
)
def test_bad_input_is_refused_before_any_sandbox(
    files: dict[str, bytes],
    entry: str,
    kwargs: dict[str, Any],
    message: str,
    spawned: list[str],
) -> None:
    call: dict[str, Any] = {"args": {}, "timeout_seconds": 2, **kwargs}
    with pytest.raises(ValidationFailed, match=message):
        run_script(files=files, entry=entry, bwrap_path="/nonexistent/bwrap", **call)
    assert spawned == []


@pytest.mark.parametrize("field", ["cpu_seconds", "memory_bytes", "output_bytes", "tmp_bytes"])
@pytest.mark.parametrize("value", [0, -1, True])
def test_limits_must_be_positive_integers(field: str, value: int) -> None:
    with pytest.raises(ValueError, match=field):
        SandboxLimits(**{field: value})
