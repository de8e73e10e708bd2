"""``GET /metrics`` (docs/contract.md §19): Prometheus text, behind ``XMEMO_METRICS_TOKEN``.

The counts of every worker process of this server (``skills_app/infra/metrics.py``, added up
from ``PROMETHEUS_MULTIPROC_DIR`` when it is set), plus what the database and the broker know,
read at scrape time so every process answers the same: jobs by kind and state, the outbox
backlog, the queues' depth, the database connections in use. The workers export nothing of
their own: what they do shows in the jobs' states.
"""

from __future__ import annotations

import hmac
import logging
import os
from collections.abc import Iterator

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from skills_app import errors
from skills_app.gateway.errors import error_response
from skills_app.infra.db import connections_in_use
from skills_app.infra.multiproc import ENV
from skills_app.infra.queue import queue_depth
from skills_app.selectors.jobs import jobs_by_kind_and_state
from skills_app.services.outbox import outbox_backlog

logger = logging.getLogger(__name__)


class StateCollector(Collector):
    """Gauges read from the database and the broker at each scrape."""

    def collect(self) -> Iterator[Metric]:
        jobs = GaugeMetricFamily("xmemo_jobs", "Jobs by kind and state.", labels=["kind", "state"])
        for (kind, state), count in jobs_by_kind_and_state().items():
            jobs.add_metric([kind, state], count)
        yield jobs
        backlog = GaugeMetricFamily(
            "xmemo_outbox_backlog",
            "Committed jobs and webhook deliveries not yet handed to the broker.",
            labels=["outbox"],
        )
        for name, count in outbox_backlog().items():
            backlog.add_metric([name], count)
        yield backlog
        in_use = connections_in_use()
        if in_use is not None:
            yield GaugeMetricFamily(
                "xmemo_database_connections",
                "Connections open to the database, all processes.",
                value=in_use,
            )
        depth = GaugeMetricFamily(
            "xmemo_queue_depth", "Task messages waiting on the broker.", labels=["queue"]
        )
        try:
            for queue in (settings.CELERY_TASK_DEFAULT_QUEUE, settings.XMEMO_EXECUTE_QUEUE):
                depth.add_metric([queue], queue_depth(queue))
        except Exception as exc:  # the broker is down: the rest of the scrape still answers
            logger.warning("queue depth unavailable: %s", exc)
        else:
            yield depth


def metrics_view(request: HttpRequest) -> HttpResponse:
    expected = f"Bearer {settings.XMEMO_METRICS_TOKEN}".encode()
    given = request.META.get("HTTP_AUTHORIZATION", "").encode()
    if not hmac.compare_digest(given, expected):
        return error_response(
            errors.AuthenticationRequired("Send Authorization: Bearer $XMEMO_METRICS_TOKEN.")
        )
    registry = CollectorRegistry(auto_describe=True)
    if os.environ.get(ENV):
        MultiProcessCollector(registry)  # every worker's counts, from their files
    else:
        registry.register(_InProcess())
    registry.register(StateCollector())
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)


class _InProcess(Collector):
    """This process's own counts, where there are no worker files to add up."""

    def collect(self) -> Iterator[Metric]:
        yield from REGISTRY.collect()
