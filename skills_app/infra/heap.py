"""The server processes' start-up heap, kept out of the garbage collector's scans.

A web process holds a few hundred thousand objects that live as long as it does, and every
full collection scanned them all: pauses that made the latency tail. ``freeze_startup_heap``
imports what the first request would, collects once and freezes the survivors (``gc.freeze``,
public CPython API; no switch). ``settle`` does the same once more, for the embedding model a
process loads at its first search. What requests build later is left to the collector: settling
it too was measured to gain nothing (docs/operations.md, "Fast paths")."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable


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


def settle() -> None:
    """Everything alive now lives as long as the process: out of the collector's scans."""
    gc.collect()
    gc.freeze()
