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

What the first requests build and keep — modules imported lazily (the cache client, the MCP
types), caches of immutable answers filling up — is settled once those requests are served:
after the 1,000th, 10,000th and 100,000th request of the process (``served``). Left in the
collector's oldest generation, 40,000 such objects made every full collection, every few seconds
under load, a pause of 15-30 ms (``make bench``: Level 1's p99 at 1.5-2x the bare view's). Each
settle is one full collection, and freezes what is in flight then as well: a bounded cost, paid
three times in a process's life. What requests allocate is collected as before.
"""

from __future__ import annotations

import gc
import itertools
from collections.abc import Iterator
from typing import Any

from django.core.signals import request_finished

# The process's requests after which it settles what it has built and kept since.
SETTLE_AFTER = frozenset({1_000, 10_000, 100_000})
# Counts requests once the process has frozen its start-up heap (a server entry did); next() is
# atomic under the GIL, for requests on several threads.
_served: Iterator[int] | None = None


def freeze_startup_heap() -> None:
    """Call once per process, after the application is built and before it serves."""
    from django.urls import get_resolver

    from . import embedding

    get_resolver().url_patterns  # noqa: B018 - imports the views now, not in the first request
    embedding.import_runtime()
    settle()
    global _served
    _served = itertools.count(1)
    request_finished.connect(_request_finished, dispatch_uid="xmemo.heap.served")


def settle() -> None:
    """Everything alive now lives as long as the process: out of the collector's scans."""
    gc.collect()
    gc.freeze()


def served() -> None:
    """Call once per answered request that Django's ``request_finished`` does not count."""
    if _served is not None and next(_served) in SETTLE_AFTER:
        settle()


def _request_finished(**_: Any) -> None:
    served()
