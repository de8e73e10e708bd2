"""Each production feature's cost on Level 1, in this process, through the whole WSGI stack.

Level 1 requests go through Django's handler with every middleware, as a gunicorn worker runs
them, with each feature on and then off (the order flipped every round); a feature's cost is
the median over the rounds of the CPU per request on over off. Off is a switch where the
product has one (``XMEMO_REQUEST_LOG``, ``XMEMO_USAGE``, empty rates) and, for the metrics and
a client's own ``X-Request-ID``, the bench standing in (no-op metrics; the id sent instead of
generated). Labels compare labelled skills with unlabelled ones. Method: docs/benchmarks.md.
"""

from __future__ import annotations

import contextlib
import logging
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

REQUEST_LOGGER = "xmemo.request"
ROUNDS = 15
REQUESTS_PER_WINDOW = 400


class _NoMetric:
    """A metric that counts nothing (the metrics switched off, for the bench only)."""

    def labels(self, *args: Any) -> _NoMetric:
        return self

    def observe(self, *args: Any) -> None:
        pass

    def inc(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def _settings(**values: Any) -> Iterator[None]:
    from django.test.utils import override_settings

    with override_settings(**values):
        yield


@contextlib.contextmanager
def _no_request_log() -> Iterator[None]:
    logger = logging.getLogger(REQUEST_LOGGER)
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


@contextlib.contextmanager
def _no_metrics() -> Iterator[None]:
    from skills_app.infra import requestctx
    from skills_app.selectors.recall import routing

    saved = requestctx.REQUESTS, getattr(routing, "RECALLS")  # noqa: B009 - not exported
    setattr(requestctx, "REQUESTS", _NoMetric())  # noqa: B010
    setattr(routing, "RECALLS", _NoMetric())  # noqa: B010
    try:
        yield
    finally:
        setattr(requestctx, "REQUESTS", saved[0])  # noqa: B010
        setattr(routing, "RECALLS", saved[1])  # noqa: B010


@contextlib.contextmanager
def _nothing() -> Iterator[None]:
    yield


def _log_to_file() -> Any:
    """Request lines on, written to a file as a server's standard error would take them."""
    logging.getLogger(REQUEST_LOGGER).setLevel(logging.INFO)
    sink = tempfile.TemporaryFile("w")  # noqa: SIM115 - lives as long as the process
    for handler in logging.getLogger(REQUEST_LOGGER).handlers:
        if isinstance(handler, logging.StreamHandler):
            handler.setStream(sink)
    return sink


def _environs(paths: list[str], secret: str, headers: dict[str, str]) -> list[dict[str, Any]]:
    from django.test import RequestFactory

    factory = RequestFactory()
    extra: dict[str, Any] = {"HTTP_AUTHORIZATION": f"Bearer {secret}", **headers}
    return [factory.get(path, **extra).environ for path in paths]


def _cpu_per_request(handler: Any, environs: list[dict[str, Any]], count: int) -> float:
    def start_response(status: str, headers: Any, exc_info: Any = None) -> None:
        if not status.startswith("200"):
            raise RuntimeError(f"Level 1 answered {status}")

    started = time.process_time()
    for index in range(count):
        response = handler(dict(environs[index % len(environs)]), start_response)
        b"".join(response)
        response.close()
    return (time.process_time() - started) / count


def feature_costs(
    secret: str, plain: list[str], labelled: list[str], *, rounds: int = ROUNDS
) -> list[tuple[str, float, float, float]]:
    """(feature, median ratio of CPU per request on/off, lowest, highest) per feature."""
    from django.core.handlers.wsgi import WSGIHandler

    handler = WSGIHandler()
    _log_to_file()
    level1 = [f"/v1/recall?slug={slug}" for slug in plain]
    with_labels = [f"/v1/recall?slug={slug}" for slug in labelled]
    given_id = {"HTTP_X_REQUEST_ID": "bench-request-id"}
    off_switch = Callable[[], contextlib.AbstractContextManager[None]]
    # feature -> (requests on, requests off, what turns it off)
    features: dict[str, tuple[list[str], list[str], dict[str, str], off_switch]] = {
        "JSON request logs": (level1, level1, {}, _no_request_log),
        "request ids (generated, not sent)": (level1, level1, given_id, _nothing),
        "metrics": (level1, level1, {}, _no_metrics),
        "usage counting": (level1, level1, {}, lambda: _settings(XMEMO_USAGE=False)),
        "rate limits (3 buckets)": (
            level1,
            level1,
            {},
            lambda: _settings(
                XMEMO_RATE_LIMIT="", XMEMO_RATE_LIMIT_USER="", XMEMO_RATE_LIMIT_WORKSPACE=""
            ),
        ),
        "labels (3 on the revision)": (with_labels, level1, {}, _nothing),
    }
    results = []
    for name, (on_paths, off_paths, off_headers, off) in features.items():
        on_env = _environs(on_paths, secret, {})
        off_env = _environs(off_paths, secret, off_headers)
        for environs in (on_env, off_env):  # every skill through this process first
            _cpu_per_request(handler, environs, len(environs))
        ratios = []
        for round_number in range(rounds):
            measured: dict[bool, float] = {}
            for is_on in (True, False)[:: -1 if round_number % 2 else 1]:
                with _nothing() if is_on else off():
                    environs = on_env if is_on else off_env
                    measured[is_on] = _cpu_per_request(handler, environs, REQUESTS_PER_WINDOW)
            ratios.append(measured[True] / measured[False])
        results.append((name, statistics.median(ratios), min(ratios), max(ratios)))
    return results


def level1_in_process(secret: str, plain: list[str], *, rounds: int = ROUNDS) -> float:
    """The bare view's CPU per request over Level 1's, every feature on (in process)."""
    from django.core.handlers.wsgi import WSGIHandler

    handler = WSGIHandler()
    level1 = _environs([f"/v1/recall?slug={slug}" for slug in plain], secret, {})
    bare = _environs(["/bench/bare"], secret, {})
    ratios = []
    for _ in range(rounds):
        ratios.append(
            _cpu_per_request(handler, bare, REQUESTS_PER_WINDOW)
            / _cpu_per_request(handler, level1, REQUESTS_PER_WINDOW)
        )
    return statistics.median(ratios)


def report(secret: str, plain: list[str], labelled: list[str]) -> list[str]:
    """The lines ``make bench`` prints."""
    lines = ["Each production feature's cost on Level 1 (CPU per request on/off, in process):"]
    for name, median, low, high in feature_costs(secret, plain, labelled):
        lines.append(f"      {name:<36}{median:>7.3f}x  (rounds {low:.3f}-{high:.3f})")
    lines.append(
        f"      bare view / Level 1, every feature on: {level1_in_process(secret, plain):.3f}"
    )
    return lines
