"""`make run`: the embedded default served, announced only once it listens.

    python -m xmemo.run --host 127.0.0.1 --port 8000

Migrates, seeds the demo data (the demo token kept in ``var/demo-token`` and reused across
restarts), each step announced, then serves the ASGI application with uvicorn in this process.
The login, the token, the URLs and ``Ready`` are printed once the port accepts connections, so
what is printed works at once, and a port in use ends with uvicorn's error, not a login. The one
place that starts threads: the announcement, and Celery's beat service running the schedule
(``settings.CELERY_BEAT_SCHEDULE``) in this process, as ``celery beat`` does for workers."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import socket
import threading
import time
from typing import Any

import uvicorn

APP = "xmemo.asgi:application"


def _step(name: str, what: str) -> None:
    print(f"make run: {name}: {what}", flush=True)


def _migrate_and_seed() -> str:
    """Brings the database up to date and seeds the demo data, in this process (one Django
    start instead of two); each step says what it does. Answers the login and token lines."""
    import django
    from django.core.management import call_command
    from django.db import connections

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "xmemo.settings")
    django.setup()
    from django.conf import settings

    database = "DATABASE_URL" if settings.DATABASE_URL else f"SQLite in {settings.VAR_DIR}"
    _step("migrate", f"the database schema ({database}); the first run applies every migration")
    call_command("migrate", interactive=False, verbosity=1)
    _step("seed", "the demo users, a team and sample skills (once), then the server starts")
    out = io.StringIO()
    # The embedded default's e-mail backend prints to stdout: seeding's review-request mails to
    # the demo users would bury the login, and the console's notifications list them anyway.
    # The demo token is kept in var/demo-token and reused while it works.
    token_file = str(settings.VAR_DIR / "demo-token")
    with contextlib.redirect_stdout(io.StringIO()):
        call_command("seed_demo", "--print-credentials", "--token-file", token_file, stdout=out)
    connections.close_all()  # the server's threads open their own
    return out.getvalue()


def _accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def _announce_when_listening(server: uvicorn.Server, host: str, port: int, text: str) -> None:
    while not server.should_exit:
        if server.started and _accepts(host, port):
            base = f"http://{host}:{port}"
            print(
                f"{text.rstrip()}\n"
                f"Console: {base}/   API: {base}/v1/ (docs {base}/v1/docs)   MCP: {base}/mcp\n"
                f"Ready: listening on {base} (Ctrl-C stops)",
                flush=True,
            )
            return
        time.sleep(0.05)


def _schedule() -> Any:
    """Start the beat schedule on a thread of this process; answers the thread."""
    from celery import beat

    from xmemo.celery import app

    app.loader.import_default_modules()  # the tasks, so beat runs them here, not on a broker
    schedule = beat.EmbeddedService(app, thread=True, scheduler_cls=app.conf.beat_scheduler)
    schedule.start()
    return schedule


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    credentials = _migrate_and_seed()
    server = uvicorn.Server(
        uvicorn.Config(APP, host=args.host, port=args.port, log_level="warning")
    )
    threading.Thread(
        target=_announce_when_listening,
        args=(server, args.host, args.port, credentials),
        daemon=True,
    ).start()
    schedule = _schedule()
    try:
        server.run()
    finally:
        schedule.stop()  # after the task it is running, if any


if __name__ == "__main__":
    main()
