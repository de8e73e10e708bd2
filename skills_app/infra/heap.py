"""The server processes' long-lived heap, kept out of the garbage collector's way.

A web process imports Django, DRF, the MCP SDK and the project: a few hundred thousand objects
that live as long as the process. Python's cyclic collector scans all of them at every
full (generation 2) collection, and under load those came every second or so and paused the
process for about 100 ms each — the requests caught behind them were the tail of the latency
distribution (``make bench``: p99). ``freeze_startup_heap`` imports what the first request would
import lazily (the URL configuration and every view behind it, and the libraries of Level 0's
semantic search), collects once, and moves every surviving object to the permanent
generation, which the collector never scans. What loads later and lives as long (an embedding
model, loaded at the first search) is settled the same way as it arrives (``settle``).

Requests build and keep more: modules imported lazily (the cache client, the MCP types), caches
of immutable answers filling up. Left in the oldest generation, 40,000 such objects made every
full collection a pause of 10-25 ms again, about once a second per worker under load
(``make bench``: Level 1's p99 at 1.7-2x the bare view's, Level 2's at 16 ms). So after a full
collection that leaves more than SETTLE_SURVIVORS objects outside the frozen heap, the process
settles again — when the next request starts and no other is in flight, so that no request's
own objects (which may form cycles that only the collector frees) are frozen with it. What
requests allocate and drop is collected as before.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.core.signals import request_finished, request_started

# A full collection that leaves more objects than this unfrozen asks for a settle: about 2 ms of
# scanning at every later full collection.
SETTLE_SURVIVORS = 10_000

_lock = threading.Lock()
_in_flight = 0  # requests begun and not yet ended, on every thread of the process
_wanted = False  # a full collection found more than SETTLE_SURVIVORS survivors


def freeze_startup_heap(*, preload: Iterable[Callable[[], None]] = ()) -> None:
    """Call once per process, after the application is built and before it serves.

    ``preload``: what else to import now (the server entries pass
    ``embedding.import_runtime``). A hook rather than an import of ours, so that this module
    depends on nothing of the project's and ``embedding`` may settle what it loads here."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - imports the views now, not in the first request
    for hook in preload:
        hook()
    settle()
    if not settings.XMEMO_HEAP_SETTLE or _watch in gc.callbacks:
        return
    gc.callbacks.append(_watch)
    request_started.connect(_request_started, dispatch_uid="xmemo.heap.begins")
    request_finished.connect(_request_finished, dispatch_uid="xmemo.heap.ends")


def settle() -> None:
    """Everything alive now lives as long as the process: out of the collector's scans."""
    global _wanted
    gc.collect()
    gc.freeze()
    _wanted = False  # the collection above saw what it froze


def request_begins() -> None:
    """Call as a request starts, before it builds anything (Django's requests do, by signal);
    settles first if a settle is wanted and no other request is in flight."""
    global _in_flight
    with _lock:
        alone = _in_flight == 0
        _in_flight += 1
    if alone and _wanted:
        settle()


def request_ends() -> None:
    global _in_flight
    with _lock:
        _in_flight = max(0, _in_flight - 1)


def _watch(phase: str, info: dict[str, Any]) -> None:
    """After each full collection: does what survived it, unfrozen, call for a settle?"""
    global _wanted
    if phase == "stop" and info["generation"] == 2:
        _wanted = len(gc.get_objects(generation=2)) > SETTLE_SURVIVORS


def _request_started(**_: Any) -> None:
    request_begins()


def _request_finished(**_: Any) -> None:
    request_ends()
