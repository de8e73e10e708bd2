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


def _probe(script: str, module: str, **settings: str) -> str:
    """What ``script`` prints, run in a fresh process that imports the server entry ``module``
    with the product's own settings (and ``settings``, as environment variables)."""
    env = {**os.environ, **settings}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "-c", script.format(module=module)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize("module", ["xmemo.wsgi", "xmemo.asgi"])
def test_the_server_entry_freezes_what_it_imported(module: str) -> None:
    frozen, views, runtime = (int(n) for n in _probe(PROBE, module).split())
    assert frozen > 100_000  # Django, DRF, the MCP SDK and the project: hundreds of thousands
    assert views > 0  # the URL configuration's views were imported before the freeze
    assert runtime == 1  # and semantic search's libraries


def test_a_loaded_encoder_is_settled_out_of_the_collectors_way() -> None:
    import gc

    from skills_app.encoder import embedding

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
from django.core.signals import request_finished, request_started
from skills_app.infra import heap

statuses = []

def wsgi():
    environ = {{"REQUEST_METHOD": "GET", "PATH_INFO": "/heap-probe-404", "QUERY_STRING": "",
               "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "80", "HTTP_HOST": "127.0.0.1",
               "wsgi.input": io.BytesIO(), "wsgi.url_scheme": "http", "wsgi.errors": sys.stderr}}
    response = entry.application(
        environ, lambda status, headers, exc_info=None: statuses.append(status.split()[0])
    )
    b"".join(response)
    response.close()  # as every WSGI server does: Django's request_finished

async def mcp():
    async def receive():
        return {{"type": "http.request", "body": b"", "more_body": False}}
    async def send(message):
        if message["type"] == "http.response.start":
            statuses.append(str(message["status"]))
    scope = {{"type": "http", "method": "POST", "path": "/mcp", "headers": [],
             "query_string": b"", "scheme": "http", "server": ("127.0.0.1", 80)}}
    await entry.application(scope, receive, send)

def serve():
    wsgi() if "{module}" == "xmemo.wsgi" else asyncio.run(mcp())

def tracked(obj):
    return any(o is obj for o in gc.get_objects())

serve()
request_started.send(sender=None)  # a request in flight (its objects must not be frozen)
# What requests build and keep: lazily imported modules, caches of answers.
late = [[i] for i in range(heap.SETTLE_SURVIVORS + 1000)]
gc.collect()  # a full collection finds them outside the frozen heap
serve()  # starts while the other is in flight
waited = tracked(late)
request_finished.send(sender=None)
serve()  # nothing else in flight: settled first
print(int(waited), int(tracked(late)))

few = [[i] for i in range(100)]  # a full collection that finds few: no settle
gc.collect()
serve()
print(int(tracked(few)))
print(" ".join(statuses))
"""


@pytest.mark.parametrize("module", ["xmemo.wsgi", "xmemo.asgi"])
def test_what_requests_leave_behind_is_settled_when_nothing_is_in_flight(module: str) -> None:
    """What a process builds in its requests and keeps (lazily imported modules, caches of
    immutable answers) is settled too, once a full collection finds much of it: a full
    collection would otherwise scan it every time (40,000 objects: 10-25 ms, every second or
    so under load). It is settled when a request starts and no other is in flight, so that no
    request's own objects are frozen with it. Django's requests count, and so do MCP's, which do
    not pass through Django."""
    first, second = _probe(SETTLE_PROBE, module).split("\n")[:2]
    waited, settled = (int(n) for n in first.split())
    assert waited == 1  # another request was in flight: not yet
    assert settled == 0  # frozen when the next request started alone
    assert int(second) == 1  # a full collection that found little leaves the heap alone


@pytest.mark.parametrize("module", ["xmemo.wsgi", "xmemo.asgi"])
def test_with_settling_off_requests_are_answered_the_same_and_nothing_is_settled(
    module: str,
) -> None:
    """The plain fallback (``XMEMO_HEAP_SETTLE=0``): after the start-up freeze the collector
    runs as CPython runs it; what requests keep stays in its scans, and answers do not change."""
    settled = _probe(SETTLE_PROBE, module).split("\n")
    plain = _probe(SETTLE_PROBE, module, XMEMO_HEAP_SETTLE="0").split("\n")
    assert plain[:2] == ["1 1", "1"]  # never settled, in flight or alone
    assert plain[2] == settled[2]  # the same statuses, request by request
    assert len(plain[2].split()) == 4
