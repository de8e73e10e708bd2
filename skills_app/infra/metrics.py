"""Prometheus metrics counted where things happen (docs/operations.md, "Metrics").

Under gunicorn and the MCP service every worker process writes its counts to files in
``PROMETHEUS_MULTIPROC_DIR`` (set up, fresh, by ``skills_app/infra/multiproc.py`` before any worker
starts), and ``/metrics`` adds them up; elsewhere (``make run``, tests) they live in the process.
What the database knows (jobs by kind and state, the outbox, connections) is read when
``/metrics`` is scraped (``skills_app/ops/metrics_view.py``), not counted here.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

REQUESTS = Histogram(
    "xmemo_http_request_duration_seconds",
    "Requests by route (URL pattern), method and status, with their latency.",
    ["route", "method", "status"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
RECALLS = Counter(
    "xmemo_recalls",
    "Level 1 and Level 2 recall answers by level and door (api, mcp, console).",
    ["level", "door"],
)
