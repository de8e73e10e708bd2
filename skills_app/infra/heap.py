"""The server processes' long-lived heap, kept out of the garbage collector's way.

A web process imports Django, DRF, the MCP SDK and the project: a few hundred thousand objects
that live as long as the process. Python's cyclic collector scans all of them at every
full (generation 2) collection, and under load those came every second or so and paused the
process for about 100 ms each — the requests caught behind them were the tail of the latency
distribution (``make bench``: p99). ``freeze_startup_heap`` imports what the first request would
import lazily (the URL configuration and every view behind it, and the libraries of Level 0's
semantic search), collects once, and moves every surviving object to the permanent
generation, which the collector never scans. What loads later and lives as long (an embedding
model, loaded at the first search) is settled the same way as it arrives (``settle``). What
requests allocate is collected as before.
"""

from __future__ import annotations

import gc


def freeze_startup_heap() -> None:
    """Call once per process, after the application is built and before it serves."""
    from django.urls import get_resolver

    from . import embedding

    get_resolver().url_patterns  # noqa: B018 - imports the views now, not in the first request
    embedding.import_runtime()
    settle()


def settle() -> None:
    """Everything alive now lives as long as the process: out of the collector's scans."""
    gc.collect()
    gc.freeze()
