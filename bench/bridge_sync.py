"""The bridge's sync (docs/contract.md §17): 200 skills with components from scratch, then a
sync with nothing changed (goal: at most 2 requests, no file written), then one changed skill.

Runs the real script (``node clients/xmemo-skill/scripts/xmemo-skill.mjs sync``) against the
project's WSGI application served in-process (threads) on a throwaway database — PostgreSQL
when DATABASE_URL is set, else SQLite — and prints the requests and the wall time of each run.

    python -m bench.bridge_sync [--skills 200]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "clients" / "xmemo-skill" / "scripts" / "xmemo-skill.mjs"


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skills", type=int, default=200)
    args = parser.parse_args()
    node = shutil.which("node")
    if node is None:
        print("bench.bridge_sync: skipped, node is not installed")
        return

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "xmemo.settings")
    # Plain HTTP on loopback: no redirect to https (production's default behind TLS).
    os.environ.setdefault("XMEMO_SSL_REDIRECT", "0")
    os.environ.setdefault("XMEMO_CONN_MAX_AGE", "0")  # each request thread closes its own
    import django

    django.setup()
    from django.core.wsgi import get_wsgi_application
    from django.db import connection

    from skills_app.access import Actor
    from skills_app.domain.bundle import ComponentData, SkillBundle
    from skills_app.services.accounts import personal_workspace_ensure, token_create, user_create
    from skills_app.services.skills import skill_save

    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    server = make_server("127.0.0.1", 0, get_wsgi_application(), _Server, _Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        user = user_create(username="bench")
        workspace = personal_workspace_ensure(user=user)
        actor = Actor(user=user, via="bench")

        def save(s: int, extra: str = "") -> None:
            body = f"# Skill {s}\n\n" + f"Step {s} of the procedure, in some detail.\n" * 20
            skill_save(
                actor=actor,
                workspace=workspace,
                slug=f"skill-{s:03d}",
                bundle=SkillBundle(
                    name=f"Skill {s}",
                    description=f"Benchmark skill {s}. Use when benchmarking.",
                    instruction_body=body + extra,
                    frontmatter={"license": "MIT", "metadata": {"n": s}},
                    components=(
                        ComponentData("references/guide.md", "reference", body.encode() * 2),
                        ComponentData("assets/data.bin", "artifact", bytes([s % 256]) * 4096),
                        ComponentData("scripts/run.sh", "script", b"#!/bin/sh\necho run\n"),
                    ),
                ),
                intent="publish",
            )

        for s in range(args.skills):
            save(s)
        _, secret = token_create(actor=actor, user=user, name="bench", scopes=["skills:read"])
        target = Path(tempfile.mkdtemp(prefix="xmemo-bench-"))
        counter = target.parent / f"{target.name}.requests"

        def sync(label: str) -> None:
            env = {
                "PATH": os.environ.get("PATH", ""),
                "XMEMO_URL": url,
                "XMEMO_TOKEN": secret,
                "XMEMO_BRIDGE_REQUESTS": str(counter),
            }
            before = {p: p.stat().st_mtime_ns for p in target.rglob("*") if p.is_file()}
            started = time.perf_counter()
            done = subprocess.run(  # the bench's own script
                [node, str(SCRIPT), "sync", "--dir", str(target / "skills")],
                env=env,
                capture_output=True,
                check=False,
            )
            elapsed = time.perf_counter() - started
            if done.returncode != 0:
                sys.exit(f"sync failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
            after = {p: p.stat().st_mtime_ns for p in target.rglob("*") if p.is_file()}
            written = sum(1 for p, m in after.items() if before.get(p) != m)
            print(
                f"{label:<22} {int(counter.read_text()):>4} requests  {elapsed * 1000:>7.0f} ms  "
                f"{written:>4} files written"
            )

        print(f"bridge sync of {args.skills} skills x 4 files ({connection.vendor}):")
        sync("from scratch")
        sync("nothing changed")
        save(args.skills // 2, extra="One more step.\n")
        sync("one skill changed")
        shutil.rmtree(target, ignore_errors=True)
        counter.unlink(missing_ok=True)
    finally:
        server.shutdown()
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
