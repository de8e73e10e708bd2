"""Run one script of a revision inside bubblewrap (docs/contract.md §13).

The only program this module executes is ``bwrap``: when it is missing or cannot build the
sandbox the run raises ``SandboxUnavailable``, never a fallback that runs the script directly.
Inside: no network, a fresh read-only root with the revision's components at ``/skill``, its
own PID namespace, uid 65534 without capabilities, only the allowed secrets as environment,
rlimits, capped output and a wall-clock timeout that kills every process left. Each piece and
why it is there: docs/security-model.md, *The script sandbox*."""

from __future__ import annotations

import json
import math
import os
import random
import resource
import select
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Any

from skills_app.domain.secrets import ENV_NAME
from skills_app.errors import SandboxUnavailable, ValidationFailed
from skills_app.sandbox.protocol import ProtocolError, encode_args, parse_result

SKILL_MOUNT = "/skill"
SANDBOX_UID = 65534
# Host uids bwrap runs as when the runner is root: below 65536 so they exist even in a
# container whose user namespace maps only 64 Ki ids, and clear of Debian's login users.
HOST_UID_RANGE = range(60_000, 61_000)

_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/alternatives", "/etc/localtime")
_PROGRAM_DIRS = ("/usr/local/bin", "/usr/bin", "/bin")

STDERR_TAIL_BYTES = 4096
LOG_LINE_BYTES = 4096
SELFTEST_TTL_SECONDS = 10.0
_SELFTEST_TIMEOUT_SECONDS = 10.0
# How long to wait for bwrap and the kernel to tear a killed sandbox down.
_TEARDOWN_SECONDS = 5.0
_READ_CHUNK = 65536
# What an allocation failure under RLIMIT_AS prints in the languages scripts are written in.
_MEMORY_MARKERS = ("MemoryError", "Cannot allocate memory", "out of memory", "bad_alloc")

# bwrap path -> time.monotonic() of its last passing self-test.
_selftest_passed_at: dict[str, float] = {}


class SandboxErrorCode(StrEnum):
    SCRIPT_FAILED = "SCRIPT_FAILED"
    TIMEOUT = "TIMEOUT"
    OUTPUT_LIMIT = "OUTPUT_LIMIT"
    PROTOCOL_ERROR = "PROTOCOL_ERROR"
    MEMORY_LIMIT = "MEMORY_LIMIT"
    CPU_LIMIT = "CPU_LIMIT"


@dataclass(frozen=True)
class SandboxLimits:
    """Resource bounds of one run. CPU, memory, file size and open files are per process."""

    cpu_seconds: int = 60
    memory_bytes: int = 512 * 1024 * 1024
    max_processes: int = 64
    max_open_files: int = 256
    max_file_bytes: int = 64 * 1024 * 1024
    output_bytes: int = 1024 * 1024
    log_bytes: int = 256 * 1024
    tmp_bytes: int = 64 * 1024 * 1024

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"SandboxLimits.{name} must be a positive integer, not {value!r}.")


@dataclass(frozen=True)
class SandboxResult:
    """The outcome of a run that reached the script. ``ok`` means exit 0 and a valid result."""

    ok: bool
    result: dict[str, Any] | None
    error_code: str | None
    error_message: str | None
    exit_code: int | None
    stderr_tail: str
    duration: float


def selftest(bwrap_path: str = "bwrap") -> None:
    """Start a sandbox with the real flags and limits and run ``sh -c 'exit 0'`` in it.

    Raises ``SandboxUnavailable`` (with bwrap's own complaint) unless that worked.
    """
    bwrap = _resolve_bwrap(bwrap_path)
    host_uid = _host_uid()
    with _skill_dir({}, host_uid) as skill_dir:
        outcome = _execute(
            bwrap=bwrap,
            host_uid=host_uid,
            skill_dir=skill_dir,
            command=["/bin/sh", "-c", "exit 0"],
            payload=b"",
            env={},
            timeout=_SELFTEST_TIMEOUT_SECONDS,
            limits=SandboxLimits(),
            on_log=None,
        )
    if outcome.exit_code != 0:
        if outcome.exit_code is None:
            detail = outcome.stderr_tail.strip() or "it never reported running the test command"
        else:
            detail = f"the test command exited with {outcome.exit_code}"
        raise SandboxUnavailable(
            f"bubblewrap cannot create a sandbox here: {detail}",
            details={"bwrap": bwrap, "exit_code": outcome.exit_code},
        )
    _selftest_passed_at[bwrap] = time.monotonic()


def run_script(
    *,
    files: Mapping[str, bytes],
    entry: str,
    args: Mapping[str, Any],
    env_allow: Sequence[str] = (),
    env_source: Mapping[str, str] | None = None,
    timeout_seconds: float,
    limits: SandboxLimits | None = None,
    on_log: Callable[[str], None] | None = None,
    bwrap_path: str = "bwrap",
) -> SandboxResult:
    """Run ``files[entry]`` in a fresh sandbox with ``args`` on stdin (see the module docstring).

    ``files`` (logical path → bytes) is read-only under ``/skill``; the interpreter comes from the
    shebang (``#!/usr/bin/env NAME`` looked up in the sandbox's bin directories), else from the
    extension (``.py``, ``.sh``). Only the ``env_allow`` names are copied from ``env_source``, never
    from ``os.environ``; each stderr line goes to ``on_log`` as it arrives. ``ValidationFailed``
    or ``SandboxUnavailable``: the script did not run; any failure of the script itself is a
    ``SandboxResult`` with ``ok=False`` and an ``error_code``."""
    limits = limits or SandboxLimits()
    if not (math.isfinite(timeout_seconds) and timeout_seconds > 0):
        raise ValidationFailed(f"The timeout must be a positive number, not {timeout_seconds!r}.")
    _check_paths(files)
    if entry not in files:
        raise ValidationFailed(
            f"The entry {entry!r} is not one of the revision's components.",
            details={"entry": entry},
        )
    command = [*_interpreter(entry, files[entry]), f"{SKILL_MOUNT}/{entry}"]
    env = _sandbox_env(env_allow, env_source or {})
    payload = encode_args(args)

    bwrap = _resolve_bwrap(bwrap_path)
    passed_at = _selftest_passed_at.get(bwrap)
    if passed_at is None or time.monotonic() - passed_at > SELFTEST_TTL_SECONDS:
        selftest(bwrap)

    host_uid = _host_uid()
    with _skill_dir(files, host_uid) as skill_dir:
        outcome = _execute(
            bwrap=bwrap,
            host_uid=host_uid,
            skill_dir=skill_dir,
            command=command,
            payload=payload,
            env=env,
            timeout=timeout_seconds,
            limits=limits,
            on_log=on_log,
        )
    return _result(outcome, timeout_seconds=timeout_seconds, limits=limits)


# --- inputs ---------------------------------------------------------------------------------


def _check_paths(paths: Iterable[str]) -> None:
    # Components were validated when saved; this guards what the runner itself risks: writing
    # outside its temporary directory, or a file where another component needs a folder.
    folders: set[str] = set()
    for path in paths:
        parts = path.split("/")
        if path.startswith("/") or "\0" in path or any(p in ("", ".", "..") for p in parts):
            raise ValidationFailed(f"Component path {path!r} is not a safe relative path.")
        folders.update("/".join(parts[:end]) for end in range(1, len(parts)))
    clashes = sorted(folders.intersection(paths))
    if clashes:
        raise ValidationFailed(f"Component path {clashes[0]!r} is both a file and a folder.")


def _sandbox_env(env_allow: Sequence[str], source: Mapping[str, str]) -> dict[str, str]:
    if isinstance(env_allow, str):
        raise ValidationFailed("env_allow must be a list of variable names, not a string.")
    env: dict[str, str] = {}
    for name in env_allow:
        if not isinstance(name, str) or not ENV_NAME.fullmatch(name):
            raise ValidationFailed(f"env_allow holds an invalid variable name: {name!r}.")
        value = source.get(name)
        if value is None:
            continue
        if "\0" in value:
            raise ValidationFailed(f"The value of {name} contains a NUL byte.")
        env[name] = value
    return env


def _mounted_roots() -> list[str]:
    return [path for path in _SYSTEM_DIRS if os.path.isdir(path) and not os.path.islink(path)]


def _find_program(path_or_name: str) -> str | None:
    """The absolute path of a program as the sandbox sees it, or None if it is not in there."""
    candidates = (
        [path_or_name]
        if path_or_name.startswith("/")
        else [f"{directory}/{path_or_name}" for directory in _PROGRAM_DIRS]
    )
    roots = _mounted_roots()
    for candidate in candidates:
        real = os.path.realpath(candidate)
        inside = any(real.startswith(root + "/") for root in roots)
        if inside and os.path.isfile(real) and os.access(real, os.X_OK):
            return candidate
    return None


def _interpreter(entry: str, content: bytes) -> list[str]:
    """The interpreter argv for the entry script, resolved to a program inside the sandbox."""
    if content.startswith(b"#!"):
        line = content[2:].split(b"\n", 1)[0].decode("utf-8", "replace").strip()
        # Like the kernel: the interpreter, then at most one argument (the rest of the line).
        program, argument = [*line.split(None, 1), "", ""][:2]
        if os.path.basename(program) == "env":
            if len(argument.split()) != 1 or argument.startswith("-"):
                raise ValidationFailed(
                    f"The shebang of {entry!r} must name one program after env: {line!r}."
                )
            program, argument = argument, ""
        found = _find_program(program)
        if found is None:
            raise ValidationFailed(
                f"The interpreter {program!r} of {entry!r} is not available in the sandbox.",
                details={"entry": entry, "interpreter": program},
            )
        return [found, argument] if argument else [found]
    default = {".py": "python3", ".sh": "/bin/sh"}.get(PurePosixPath(entry).suffix)
    if default is None:
        raise ValidationFailed(
            f"Cannot tell how to run {entry!r}: give it a shebang line or a .py or .sh name.",
            details={"entry": entry},
        )
    found = _find_program(default)
    if found is None:
        raise SandboxUnavailable(f"The sandbox has no {default} to run {entry!r} with.")
    return [found]


def _resolve_bwrap(bwrap_path: str) -> str:
    found = shutil.which(bwrap_path)
    if found is None:
        raise SandboxUnavailable(
            f"bubblewrap ({bwrap_path!r}) is not installed or not executable.",
            details={"bwrap": bwrap_path},
        )
    return os.path.abspath(found)


def _host_uid() -> int | None:
    """The host uid to start bwrap as: one of HOST_UID_RANGE when we are root, else our own.

    Two concurrent runs rarely draw the same uid; if they do, they share a process limit.
    """
    return random.choice(HOST_UID_RANGE) if os.geteuid() == 0 else None


def _process_limit(limits: SandboxLimits, host_uid: int | None) -> int:
    """RLIMIT_NPROC for bwrap, which the kernel checks against all tasks of the host uid.

    A uid of HOST_UID_RANGE has (nearly) none; our own uid, when we are not root, already has
    tasks of its own, so the sandbox gets ``max_processes`` on top of those.
    """
    if host_uid is not None:
        return limits.max_processes
    uid, tasks = os.getuid(), 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            with suppress(OSError):
                if os.stat(f"/proc/{name}").st_uid == uid:
                    tasks += len(os.listdir(f"/proc/{name}/task"))
    return tasks + limits.max_processes


@contextmanager
def _skill_dir(files: Mapping[str, bytes], owner: int | None) -> Iterator[Path]:
    """A private temporary directory holding ``files``, removed afterwards.

    Read-only and readable by nobody but ``owner`` (the host uid bwrap runs as; None: us) and
    root, so no other host user sees the scripts.
    """
    root = Path(tempfile.mkdtemp(prefix="xmemo-sandbox-"))
    try:
        for logical_path, data in files.items():
            target = root.joinpath(*logical_path.split("/"))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        for directory, dirnames, filenames in os.walk(root, topdown=False):
            for name in filenames:
                _lock(os.path.join(directory, name), 0o400, owner)
            for name in dirnames:
                _lock(os.path.join(directory, name), 0o500, owner)
        _lock(str(root), 0o500, owner)
        yield root
    finally:
        for directory, _, _ in os.walk(root):
            os.chmod(directory, 0o700)
        shutil.rmtree(root)


def _lock(path: str, mode: int, owner: int | None) -> None:
    if owner is not None:
        os.chown(path, owner, owner)
    os.chmod(path, mode)


# --- the bwrap process ----------------------------------------------------------------------


def _bwrap_argv(bwrap: str, status_fd: int, skill_dir: Path, limits: SandboxLimits) -> list[str]:
    argv = [bwrap, "--json-status-fd", str(status_fd)]
    argv += ["--unshare-all", "--unshare-user", "--disable-userns", "--hostname", "sandbox"]
    argv += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--cap-drop", "ALL"]
    argv += ["--die-with-parent", "--new-session", "--as-pid-1"]
    for path in _SYSTEM_DIRS:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += ["--ro-bind", path, path]
    for path in _SYSTEM_FILES:
        if os.path.exists(path):
            argv += ["--ro-bind", path, path]
    argv += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev"]
    # The sandbox's own size-capped tmpfs, not the host's /tmp.
    argv += ["--size", str(limits.tmp_bytes), "--perms", "1777", "--tmpfs", "/tmp"]  # noqa: S108
    argv += ["--ro-bind", str(skill_dir), SKILL_MOUNT, "--remount-ro", "/", "--chdir", SKILL_MOUNT]
    return argv


def _sandbox_command(command: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """What bwrap starts as the sandbox's PID 1 (``--as-pid-1``): sh running ``command``.

    With bwrap's own reaper as PID 1, bwrap exits as soon as the command does and leaves its
    PID 1 to the host's init, which in a container may never reap it. A shell as PID 1 is
    reaped by bwrap, and the command, as PID 2, keeps ordinary signal handling (PID 1 ignores
    the signals it has no handler for). ``; exit $?`` stops sh from exec'ing in its place.

    bwrap always sets PWD to the working directory, so ``env -u PWD`` drops it unless allowed;
    the script starts with exactly the allowed variables (an allowed PWD reads ``/skill``).
    """
    shell = _find_program("/bin/sh")
    env_program = _find_program("/usr/bin/env")
    if shell is None or env_program is None:
        raise SandboxUnavailable("The sandbox needs /bin/sh and /usr/bin/env.")
    clear_pwd = [] if "PWD" in env else [env_program, "-u", "PWD", "--"]
    return [shell, "-c", '"$@"; exit $?', "sandbox-init", *clear_pwd, *command]


def _rlimit_setter(limits: SandboxLimits, processes: int) -> Callable[[], None]:
    """The preexec function: runs in the forked child after the uid switch, before exec(bwrap).

    It only calls setrlimit, which takes no lock another thread of this process could hold.
    """
    pairs = [
        (resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1)),
        (resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes)),
        (resource.RLIMIT_NPROC, (processes, processes)),
        (resource.RLIMIT_NOFILE, (limits.max_open_files, limits.max_open_files)),
        (resource.RLIMIT_FSIZE, (limits.max_file_bytes, limits.max_file_bytes)),
        (resource.RLIMIT_CORE, (0, 0)),
    ]

    def apply() -> None:
        for which, value in pairs:
            resource.setrlimit(which, value)

    return apply


class _StderrSink:
    """Splits stderr into lines for ``on_log`` (each line and the total capped); keeps a tail."""

    def __init__(self, on_log: Callable[[str], None] | None, budget: int) -> None:
        self._on_log = on_log
        self._budget = budget
        self._pending = bytearray()
        self._tail = bytearray()
        self._truncated = False

    @property
    def tail(self) -> str:
        return self._tail.decode("utf-8", "replace")

    def feed(self, data: bytes) -> None:
        self._tail += data
        del self._tail[:-STDERR_TAIL_BYTES]
        if self._on_log is None or self._truncated:
            return
        self._pending += data
        while (newline := self._pending.find(b"\n")) != -1 or len(self._pending) >= LOG_LINE_BYTES:
            cut = newline if 0 <= newline < LOG_LINE_BYTES else LOG_LINE_BYTES
            line = bytes(self._pending[:cut])
            del self._pending[: cut + 1 if cut == newline else cut]
            self._emit(line)

    def close(self) -> None:
        if self._pending:
            self._emit(bytes(self._pending))
            self._pending.clear()

    def _emit(self, line: bytes) -> None:
        if self._on_log is None or self._truncated:
            return
        if len(line) > self._budget:
            self._truncated = True
            self._pending.clear()
            self._on_log("[log truncated: the script wrote more stderr than the log keeps]")
            return
        self._budget -= len(line) + 1
        self._on_log(line.decode("utf-8", "replace").rstrip("\r"))


@dataclass(frozen=True)
class _Outcome:
    stdout: bytes
    stderr_tail: str
    exit_code: int | None  # None: bwrap never reported the command's exit (it did not start)
    stopped: SandboxErrorCode | None  # TIMEOUT or OUTPUT_LIMIT when the runner killed it
    duration: float


class _Sandbox:
    """One running bwrap: feeds stdin, drains stdout, stderr and bwrap's status stream."""

    def __init__(self, proc: subprocess.Popen[bytes], status_fd: int) -> None:
        self._proc = proc
        self._status_fd = status_fd
        self._status = bytearray()
        self._pid1_fd: int | None = None
        self.exit_code: int | None = None

    def pump(
        self, payload: bytes, deadline: float, output_cap: int, sink: _StderrSink
    ) -> tuple[bytes, SandboxErrorCode | None]:
        """Exchange bytes until the sandbox closes its pipes, or stop it at a limit."""
        proc = self._proc
        # All three are pipes (see _execute).
        assert proc.stdin is not None
        assert proc.stdout is not None
        assert proc.stderr is not None
        stdout = bytearray()
        stdin_fd, stdout_fd, stderr_fd = (
            proc.stdin.fileno(),
            proc.stdout.fileno(),
            proc.stderr.fileno(),
        )
        with selectors.DefaultSelector() as selector:
            if payload:
                os.set_blocking(stdin_fd, False)
                selector.register(stdin_fd, selectors.EVENT_WRITE)
            else:
                proc.stdin.close()
            for fd in (stdout_fd, stderr_fd, self._status_fd):
                selector.register(fd, selectors.EVENT_READ)
            written = 0
            while selector.get_map():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return bytes(stdout), SandboxErrorCode.TIMEOUT
                for key, _ in selector.select(remaining):
                    fd = key.fd
                    if fd == stdin_fd:
                        try:
                            written += os.write(fd, payload[written : written + _READ_CHUNK])
                        except BlockingIOError:
                            continue
                        except BrokenPipeError:  # the script does not read its args
                            written = len(payload)
                        if written >= len(payload):
                            selector.unregister(fd)
                            proc.stdin.close()
                        continue
                    data = os.read(fd, _READ_CHUNK)
                    if not data:
                        selector.unregister(fd)
                    elif fd == stdout_fd:
                        stdout += data
                        if len(stdout) > output_cap:
                            return bytes(stdout[:output_cap]), SandboxErrorCode.OUTPUT_LIMIT
                    elif fd == stderr_fd:
                        sink.feed(data)
                    else:
                        self._read_status(data)
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return bytes(stdout), SandboxErrorCode.TIMEOUT
        return bytes(stdout), None

    def _read_status(self, data: bytes) -> None:
        # bwrap writes one JSON document per line: {"child-pid": N, ...}, later {"exit-code": N}.
        self._status += data
        while (newline := self._status.find(b"\n")) != -1:
            line = bytes(self._status[:newline])
            del self._status[: newline + 1]
            try:
                document = json.loads(line)
            except ValueError:
                continue
            if not isinstance(document, dict):
                continue
            if isinstance(document.get("exit-code"), int):
                self.exit_code = document["exit-code"]
            if isinstance(document.get("child-pid"), int):
                self._watch_pid1(document["child-pid"])

    def _watch_pid1(self, pid: int) -> None:
        """Hold a pidfd on the sandbox's PID 1, if ``pid`` still is bwrap's child."""
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            return
        # The pidfd pins the process; checking its parent rules out a recycled pid.
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            status = ""
        if f"\nPPid:\t{self._proc.pid}\n" in status:
            self._pid1_fd = pidfd
        else:
            os.close(pidfd)

    def stop(self) -> None:
        """Kill the sandbox's PID 1; the kernel then kills every process left in it.

        bwrap reaps its PID 1 and exits by itself. Only if PID 1 is not known (yet) is bwrap
        killed directly, which takes its PID 1 along through ``--die-with-parent``.
        """
        if self._pid1_fd is not None:
            with suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pid1_fd, signal.SIGKILL)
        elif self._proc.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(self._proc.pid, signal.SIGKILL)

    def close(self) -> None:
        """Reap bwrap and wait until the sandbox's PID 1, and so every process in it, is gone."""
        if self._proc.poll() is None:
            self.stop()
        try:
            self._proc.wait(_TEARDOWN_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()
        if self._pid1_fd is not None:
            # A pidfd turns readable when its process has exited; PID 1 of a namespace exits
            # only after the kernel has killed and reaped every other process in it.
            select.select([self._pid1_fd], [], [], _TEARDOWN_SECONDS)
            os.close(self._pid1_fd)
            self._pid1_fd = None
        for pipe in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            if pipe is not None:
                pipe.close()


def _execute(
    *,
    bwrap: str,
    host_uid: int | None,
    skill_dir: Path,
    command: Sequence[str],
    payload: bytes,
    env: Mapping[str, str],
    timeout: float,
    limits: SandboxLimits,
    on_log: Callable[[str], None] | None,
) -> _Outcome:
    started = time.monotonic()
    inner = _sandbox_command(command, env)
    status_read, status_write = os.pipe()
    try:
        try:
            proc = subprocess.Popen(
                [*_bwrap_argv(bwrap, status_write, skill_dir, limits), "--", *inner],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                env=dict(env),
                cwd="/",
                pass_fds=(status_write,),
                start_new_session=True,
                user=host_uid,
                group=host_uid,
                extra_groups=None if host_uid is None else [],
                preexec_fn=_rlimit_setter(limits, _process_limit(limits, host_uid)),
            )
        finally:
            os.close(status_write)
    except (OSError, subprocess.SubprocessError) as exc:
        os.close(status_read)
        raise SandboxUnavailable(f"bubblewrap could not be started: {exc}") from exc

    sandbox = _Sandbox(proc, status_read)
    sink = _StderrSink(on_log, limits.log_bytes)
    try:
        stdout, stopped = sandbox.pump(payload, started + timeout, limits.output_bytes, sink)
        if stopped is not None:
            sandbox.stop()
    finally:
        sandbox.close()
        os.close(status_read)
    sink.close()
    return _Outcome(
        stdout=stdout,
        stderr_tail=sink.tail,
        exit_code=sandbox.exit_code,
        stopped=stopped,
        duration=time.monotonic() - started,
    )


# --- the verdict ----------------------------------------------------------------------------


def _result(outcome: _Outcome, *, timeout_seconds: float, limits: SandboxLimits) -> SandboxResult:
    def failure(code: SandboxErrorCode, message: str) -> SandboxResult:
        return SandboxResult(
            ok=False,
            result=None,
            error_code=code,
            error_message=message,
            exit_code=outcome.exit_code,
            stderr_tail=outcome.stderr_tail,
            duration=outcome.duration,
        )

    if outcome.stopped is SandboxErrorCode.TIMEOUT:
        return failure(
            SandboxErrorCode.TIMEOUT,
            f"The script did not finish within {timeout_seconds:g} s and was killed.",
        )
    if outcome.stopped is SandboxErrorCode.OUTPUT_LIMIT:
        return failure(
            SandboxErrorCode.OUTPUT_LIMIT,
            f"The script wrote more than {limits.output_bytes} bytes to stdout and was killed.",
        )
    code = outcome.exit_code
    if code is None:
        # bwrap ran but never started the command; the script did not run.
        raise SandboxUnavailable(
            f"bubblewrap could not start the script: {outcome.stderr_tail.strip()}"
        )
    if code != 0:
        if any(marker in outcome.stderr_tail for marker in _MEMORY_MARKERS):
            return failure(
                SandboxErrorCode.MEMORY_LIMIT,
                f"The script ran out of memory (limit {limits.memory_bytes} bytes per process).",
            )
        if code == 128 + signal.SIGXCPU:
            return failure(
                SandboxErrorCode.CPU_LIMIT,
                f"The script used more than {limits.cpu_seconds} s of CPU time and was killed.",
            )
        how = f"was killed by signal {code - 128}" if code > 128 else f"exited with code {code}"
        return failure(SandboxErrorCode.SCRIPT_FAILED, f"The script {how}.")
    try:
        result = parse_result(outcome.stdout)
    except ProtocolError as exc:
        return failure(SandboxErrorCode.PROTOCOL_ERROR, f"Protocol error: {exc}.")
    return SandboxResult(
        ok=True,
        result=result,
        error_code=None,
        error_message=None,
        exit_code=0,
        stderr_tail=outcome.stderr_tail,
        duration=outcome.duration,
    )
