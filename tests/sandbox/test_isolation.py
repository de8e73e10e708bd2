"""What a script inside the sandbox can and cannot reach (real bubblewrap)."""

from __future__ import annotations

import errno
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from skills_app.sandbox import SandboxLimits, run_script
from tests.sandbox.helpers import run_python

pytestmark = pytest.mark.services


def test_a_python_script_gets_its_args_and_returns_its_result(bwrap: str) -> None:
    source = (
        "import json, sys\n"
        "args = json.load(sys.stdin)\n"
        "print('working on', args['path'], file=sys.stderr)\n"
        "json.dump({'freed_bytes': 1048576, 'path': args['path'], 'dry': args['dry_run']},"
        " sys.stdout)\n"
    )
    logs: list[str] = []
    result = run_python(
        bwrap, source, args={"path": "/var/cache", "dry_run": True}, on_log=logs.append
    )
    assert result.ok, result
    assert result.result == {"freed_bytes": 1048576, "path": "/var/cache", "dry": True}
    assert (result.error_code, result.exit_code) == (None, 0)
    assert logs == ["working on /var/cache"]
    assert result.stderr_tail == "working on /var/cache\n"
    assert result.duration > 0


def test_a_shell_script_gets_its_args_and_returns_its_result(bwrap: str) -> None:
    script = b'#!/bin/sh\nread -r args\necho "starting" >&2\nprintf \'{"echo": %s}\\n\' "$args"\n'
    result = run_script(
        files={"scripts/run.sh": script, "references/notes.md": b"# notes\n"},
        entry="scripts/run.sh",
        args={"n": 2},
        timeout_seconds=5,
        bwrap_path=bwrap,
    )
    assert result.ok, result
    assert result.result == {"echo": {"n": 2}}


def test_the_interpreter_follows_the_shebang(bwrap: str) -> None:
    script = (
        b"#!/usr/bin/env python3\nimport sys\nprint('{\"version\": %d}' % sys.version_info[0])\n"
    )
    result = run_script(
        files={"tool": script}, entry="tool", args={}, timeout_seconds=5, bwrap_path=bwrap
    )
    assert result.ok, result
    assert result.result == {"version": 3}


def test_components_are_readable_at_skill_and_the_script_runs_there(bwrap: str) -> None:
    source = (
        "import json, os\n"
        "json.dump({'cwd': os.getcwd(), 'ref': open('references/a.md').read(),"
        " 'tree': sorted(os.listdir('/skill'))}, open(1, 'w'))\n"
    )
    result = run_script(
        files={"main.py": source.encode(), "references/a.md": b"alpha"},
        entry="main.py",
        args={},
        timeout_seconds=5,
        bwrap_path=bwrap,
    )
    assert result.result == {"cwd": "/skill", "ref": "alpha", "tree": ["main.py", "references"]}


@pytest.fixture
def host_listener() -> Iterator[socket.socket]:
    """A real listening socket on the host's 127.0.0.1."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.setblocking(False)
    yield server
    server.close()


def test_there_is_no_network(bwrap: str, host_listener: socket.socket) -> None:
    port = host_listener.getsockname()[1]
    source = f"""
import json, socket
def attempt(address):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(2)
    try:
        sock.connect(address)
    except OSError as exc:
        return exc.errno
    return "connected"
json.dump({{
    "loopback": attempt(("127.0.0.1", {port})),
    "outside": attempt(("10.255.255.1", 80)),
    "interfaces": [name for _, name in socket.if_nameindex()],
}}, open(1, "w"))
"""
    result = run_python(bwrap, source)
    assert result.ok, result
    # The host's listener is not reachable: the sandbox's 127.0.0.1 is its own, empty loopback.
    assert result.result == {
        "loopback": errno.ECONNREFUSED,
        "outside": errno.ENETUNREACH,
        "interfaces": ["lo"],
    }
    with pytest.raises(BlockingIOError):
        host_listener.accept()


def test_only_the_private_tmp_is_writable(bwrap: str) -> None:
    source = """
import json
outcome = {}
for path in ["/skill/main.py", "/skill/new", "/usr/x", "/etc/x", "/x", "/dev/x",
             "/tmp/x"]:
    try:
        with open(path, "w") as handle:
            handle.write("x")
        outcome[path] = "written"
    except OSError as exc:
        outcome[path] = exc.strerror
json.dump(outcome, open(1, "w"))
"""
    result = run_python(bwrap, source)
    assert result.ok, result
    assert result.result is not None
    assert result.result.pop("/tmp/x") == "written"
    assert set(result.result.values()) <= {"Read-only file system", "Permission denied"}, result


def test_the_private_tmp_is_capped(bwrap: str) -> None:
    source = """
import json
try:
    with open("/tmp/big", "wb") as handle:
        handle.write(b"x" * (3 * 1024 * 1024))
    outcome = "written"
except OSError as exc:
    outcome = exc.strerror
json.dump({"outcome": outcome}, open(1, "w"))
"""
    result = run_python(bwrap, source, limits=SandboxLimits(tmp_bytes=1024 * 1024))
    assert result.result == {"outcome": "No space left on device"}


def test_host_files_are_not_there(bwrap: str, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("host secret")
    paths = ["/root", "/home", "/work", "/work/main/manage.py", str(tmp_path / "secret.txt")]
    paths += ["/etc/passwd", "/etc/shadow", "/var", "/run"]
    source = (
        f"import json, os\njson.dump({{p: os.path.exists(p) for p in {paths!r}}}, open(1, 'w'))\n"
    )
    result = run_python(bwrap, source)
    assert result.result == dict.fromkeys(paths, False)


def test_the_script_runs_unprivileged(bwrap: str) -> None:
    source = """
import json, os, subprocess
status = dict(line.split(":\\t", 1) for line in open("/proc/self/status").read().splitlines()
              if ":\\t" in line)
nested = subprocess.run(["/usr/bin/unshare", "--user", "/bin/true"], capture_output=True)
json.dump({
    "uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(),
    "cap_eff": status["CapEff"].strip(), "cap_bnd": status["CapBnd"].strip(),
    "no_new_privs": status["NoNewPrivs"].strip(), "nested_userns": nested.returncode,
    "pid": os.getpid(), "hostname": os.uname().nodename,
}, open(1, "w"))
"""
    result = run_python(bwrap, source)
    assert result.result is not None, result
    facts = result.result
    assert (facts["uid"], facts["gid"], facts["groups"]) == (65534, 65534, [])
    assert facts["cap_eff"] == facts["cap_bnd"] == "0000000000000000"
    assert facts["no_new_privs"] == "1"
    assert facts["nested_userns"] != 0  # --disable-userns
    assert facts["pid"] < 10  # its own PID namespace
    assert facts["hostname"] == "sandbox"


def test_the_environment_is_only_what_env_allow_names(bwrap: str) -> None:
    source = (
        "import json\njson.dump({'environ': open('/proc/self/environ').read()}, open(1, 'w'))\n"
    )
    host = {"XMEMO_TEST_SECRET": "s3cret-value", "PATH": "/usr/bin:/bin", "HOME": "/root"}

    hidden = run_python(bwrap, source, env_source=host)
    assert hidden.result == {"environ": ""}  # not even PATH or PWD

    allowed = run_python(bwrap, source, env_source=host, env_allow=["XMEMO_TEST_SECRET", "NOPE"])
    assert allowed.result == {"environ": "XMEMO_TEST_SECRET=s3cret-value\0"}


def test_the_process_environment_never_reaches_a_script(
    bwrap: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whatever a manifest names, values come only from the env_source the caller passes
    # (the workspace's secrets); the runner's own environment is never a source.
    monkeypatch.setenv("XMEMO_TEST_SECRET", "from-os-environ")
    source = (
        "import json\njson.dump({'environ': open('/proc/self/environ').read()}, open(1, 'w'))\n"
    )
    assert run_python(bwrap, source).result == {"environ": ""}
    named = run_python(bwrap, source, env_allow=["XMEMO_TEST_SECRET", "PATH", "SECRET_KEY"])
    assert named.result == {"environ": ""}


def test_secrets_are_not_on_any_command_line(bwrap: str) -> None:
    # PID 1 inside is bwrap itself, so its command line is the one the host shows for bwrap.
    source = """
import json, os
lines = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        lines.append(open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace"))
json.dump({"cmdlines": lines}, open(1, "w"))
"""
    result = run_python(
        bwrap,
        source,
        env_source={"XMEMO_TEST_SECRET": "s3cret-value"},
        env_allow=["XMEMO_TEST_SECRET"],
    )
    assert result.result is not None
    assert not any("s3cret-value" in line for line in result.result["cmdlines"])
