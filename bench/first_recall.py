"""First contact, timed: from `make run` in a fresh clone (no venv, empty package caches) to the
first Level 0 recall that answers with results (issue 37 #15: the goal is under 2 minutes).

    python -m bench.first_recall [--repo DIR] [--keep-caches] [--max-seconds N]

Clones DIR (default: this checkout's HEAD), runs `make run` there on the embedded default,
prints each step's line with the seconds since the start, then asks `GET /v1/recall` with the
printed demo token until it answers results: ``first recall: N.N s (goal < 120 s: met)``. With
``--max-seconds`` it exits 1 past that."""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
GOAL_SECONDS = 120.0
DROP = ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "SECRET_KEY_FILE", "XMEMO_DEBUG", "VIRTUAL_ENV")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _first_results(base: str, token: str, deadline: float) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    while time.monotonic() < deadline:
        answer = httpx.get(
            f"{base}/v1/recall", params={"query": "incident"}, headers=headers, timeout=120
        )
        if answer.status_code == 200 and answer.json()["data"]["results"]:
            return
        time.sleep(0.2)
    raise SystemExit("no recall answered results before the deadline")


def measure(repo: Path, *, keep_caches: bool, timeout: float) -> float:
    """Seconds from `make run` in a fresh clone of ``repo`` to the first recall's results."""
    with tempfile.TemporaryDirectory(prefix="first-recall-") as scratch:
        clone = Path(scratch) / "clone"
        subprocess.run(["git", "clone", "--quiet", str(repo), str(clone)], check=True)
        env = {k: v for k, v in os.environ.items() if k not in DROP and not k.startswith("XMEMO_")}
        if not keep_caches:  # a fresh machine: nothing downloaded before
            env.update(UV_CACHE_DIR=f"{scratch}/uv-cache", PIP_NO_CACHE_DIR="1")
        port = _free_port()
        start = time.monotonic()
        proc = subprocess.Popen(
            ["make", "--no-print-directory", "run", f"PORT={port}"],
            cwd=clone,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        assert proc.stdout is not None
        token = ""
        try:
            for line in proc.stdout:
                line = line.rstrip()
                if line.startswith(("make run: ", "Demo token: ", "Ready: ")):
                    shown = "Demo token: xm_…" if line.startswith("Demo token: ") else line
                    print(f"{time.monotonic() - start:6.1f} s  {shown}", flush=True)
                token = line.split(": ", 1)[1] if line.startswith("Demo token: ") else token
                if line.startswith("Ready: "):
                    break
                if time.monotonic() - start > timeout:
                    raise SystemExit(f"make run was not ready after {timeout:.0f} s")
            else:
                raise SystemExit(f"make run ended with {proc.wait()} before it was ready")
            _first_results(f"http://127.0.0.1:{port}", token, start + timeout)
            return time.monotonic() - start
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=ROOT)
    parser.add_argument("--keep-caches", action="store_true", help="reuse uv's and pip's caches")
    parser.add_argument("--max-seconds", type=float, help="exit 1 when slower than this")
    parser.add_argument("--timeout", type=float, default=900.0)
    args = parser.parse_args(argv)
    seconds = measure(args.repo, keep_caches=args.keep_caches, timeout=args.timeout)
    verdict = "met" if seconds < GOAL_SECONDS else "missed"
    print(f"first recall: {seconds:.1f} s (goal < {GOAL_SECONDS:.0f} s: {verdict})", flush=True)
    if args.max_seconds is not None and seconds > args.max_seconds:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
