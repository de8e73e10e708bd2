"""The server processes' long-lived heap, kept out of the garbage collector's way.

A web process holds a few hundred thousand objects that live as long as it does, and every
full collection scanned them all: pauses that made the latency tail. ``freeze_startup_heap``
imports what the first request would, collects once and freezes the survivors (``gc.freeze``);
``settle`` does the same later, when a full collection leaves more than ``SETTLE_SURVIVORS``
objects outside the frozen heap, at the start of a request with no other in flight (so no
request's own cycles are frozen). No private API; ``XMEMO_HEAP_SETTLE=0`` settles nothing after
start-up (``tests/infra/test_heap.py`` runs both). The measurements: docs/operations.md."""

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
