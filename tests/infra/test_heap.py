"""Both server entries freeze their start-up heap (skills_app/infra/heap.py): a full collection no
longer scans the objects every process holds for its whole life, nor the embedding model a
process loads at its first search."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.e2e.processes import ROOT

PROBE = """
import gc, sys
import {module}
from django.urls import get_resolver
frozen = gc.get_freeze_count()
views = [m for m in sys.modules if m.startswith("skills_app.api")]
runtime = all(m in sys.modules for m in ("faiss", "onnxruntime", "tokenizers"))
print(frozen, len(views), int(runtime))
"""


@pytest.mark.parametrize("module", ["xmemo.wsgi", "xmemo.asgi"])
def test_the_server_entry_freezes_what_it_imported(module: str) -> None:
    env = {**os.environ, "XMEMO_EMBED_IN_PROCESS": "0"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    frozen, views, runtime = (int(n) for n in done.stdout.split())
    assert frozen > 100_000  # Django, DRF, the MCP SDK and the project: hundreds of thousands
    assert views > 0  # the URL configuration's views were imported before the freeze
    assert runtime == 1  # and semantic search's libraries


def test_a_loaded_encoder_is_settled_out_of_the_collectors_way() -> None:
    import gc

    from skills_app.infra import embedding

    embedding.reset_for_tests()
    try:
        before = gc.get_freeze_count()
        assert embedding.query_encoder() is not None
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()
        embedding.reset_for_tests()


SETTLE_PROBE = """
import asyncio, gc, io, sys
import {module} as entry
from skills_app.infra import heap

late = [{{"built": "after start-up"}}]  # a cache filled by the first requests, and kept

def wsgi(n):
    for _ in range(n):
        environ = {{"REQUEST_METHOD": "GET", "PATH_INFO": "/heap-probe-404",
                   "QUERY_STRING": "", "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "80",
                   "HTTP_HOST": "127.0.0.1", "wsgi.input": io.BytesIO(),
                   "wsgi.url_scheme": "http", "wsgi.errors": sys.stderr}}
        response = entry.application(environ, lambda status, headers, exc_info=None: None)
        b"".join(response)
        response.close()  # as every WSGI server does: Django's request_finished

async def mcp(n):
    async def receive():
        return {{"type": "http.request", "body": b"", "more_body": False}}
    async def send(message):
        pass
    scope = {{"type": "http", "method": "POST", "path": "/mcp", "headers": [],
             "query_string": b"", "scheme": "http", "server": ("127.0.0.1", 80)}}
    for _ in range(n):
        await entry.application(scope, receive, send)

def serve(n):
    wsgi(n) if "{module}" == "xmemo.wsgi" else asyncio.run(mcp(n))

def tracked():
    return any(o is late for o in gc.get_objects())

first = min(heap.SETTLE_AFTER)
serve(first - 1)
before = tracked()
serve(1)
print(int(before), int(tracked()))
"""


@pytest.mark.parametrize("module", ["xmemo.wsgi", "xmemo.asgi"])
def test_what_the_first_requests_leave_behind_is_settled_too(module: str) -> None:
    """What a process builds in its first requests and keeps (lazily imported modules, caches of
    immutable answers) is settled once those requests are served: a full collection would
    otherwise scan it every time (40,000 objects, 15-30 ms, every few seconds under load).
    Django's requests count, and so do MCP's, which do not pass through Django."""
    env = {**os.environ, "XMEMO_EMBED_IN_PROCESS": "0"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "-c", SETTLE_PROBE.format(module=module)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    tracked_before, tracked_after = (int(n) for n in done.stdout.split())
    assert tracked_before == 1  # still scanned by every full collection before then
    assert tracked_after == 0  # frozen once the threshold's request was served
