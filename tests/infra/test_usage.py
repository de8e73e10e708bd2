"""Usage counting (docs/contract.md §19): with Redis, counts wait in memory at most
``HANDOFF_SECONDS`` and go to Redis with the count that falls due or from the server's idle loop
(its reply read later); while Redis is unreachable, or a connection drops before it answers,
counts wait in memory and go once it is back. Tests with ``no_wait`` hand each count on at once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis

from skills_app.infra import usage
from tests.support import require_service


@pytest.fixture
def shared(settings: Any) -> Iterator[redis.Redis]:
    try:
        client = redis.Redis.from_url(settings.REDIS_URL or "redis://-")
        client.ping()
    except (redis.RedisError, ValueError):
        require_service("Redis", False, "set REDIS_URL")
    settings.XMEMO_CACHE_PREFIX = "usage-test"
    usage.reset()
    usage._writer.settle()
    client.delete(*usage._keys())
    yield client
    client.delete(*usage._keys())


@pytest.fixture
def no_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(usage, "HANDOFF_SECONDS", 0.0)


def _held() -> int:
    return sum(c.level1 + c.level2 for c in usage._drain())


def _held_now() -> int:
    with usage._lock:
        return sum(int(v[0] + v[1]) for v in usage._counts.values())


def test_counts_wait_in_memory_then_go_to_redis_with_the_count_that_falls_due(
    shared: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    usage.count(revision_pk=7, client="agent", level=1)
    usage.count(revision_pk=7, client="agent", level=1)
    assert _held_now() == 2  # no write to Redis on the answer's path
    assert usage.pop() == []
    monkeypatch.setattr(usage, "_due", 0.0)  # HANDOFF_SECONDS later
    usage.count(revision_pk=7, client="agent", level=2)  # all of them go
    assert _held_now() == 0
    usage.settle()
    [taken] = usage.pop()
    assert (taken.revision_pk, taken.level1, taken.level2) == (7, 2, 1)


def test_an_idle_process_hands_its_counts_on_when_they_fall_due(
    shared: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    usage.count(revision_pk=8, client="agent", level=2)
    usage.handoff_if_due()  # not yet due
    assert _held_now() == 1
    monkeypatch.setattr(usage, "_due", 0.0)  # HANDOFF_SECONDS later
    usage.handoff_if_due()  # what the server's idle loop calls
    assert _held_now() == 0
    usage.settle()
    [taken] = usage.pop()
    assert (taken.revision_pk, taken.level1, taken.level2) == (8, 0, 1)


@pytest.mark.usefixtures("no_wait")
def test_each_count_is_in_redis_at_once(shared: redis.Redis) -> None:
    usage.count(revision_pk=7, client="agent", level=1)
    usage.count(revision_pk=7, client="agent", level=2)
    assert _held() == 0  # nothing waits in this process
    usage.settle()  # Redis's replies, which no count waits for
    [taken] = usage.pop()
    assert (taken.revision_pk, taken.client, taken.level1, taken.level2) == (7, "agent", 1, 1)


@pytest.mark.usefixtures("no_wait")
def test_counts_wait_in_memory_while_redis_is_down_and_go_once_it_is_back(
    shared: redis.Redis, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = settings.REDIS_URL
    usage._redis.cache_clear()
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    usage.count(revision_pk=7, client="agent", level=1)
    settings.REDIS_URL = url
    usage._redis.cache_clear()
    usage.count(revision_pk=7, client="agent", level=1)  # within RETRY_SECONDS: held
    assert usage.pop() == []
    monkeypatch.setattr(usage, "_redis_down_until", 0.0)  # RETRY_SECONDS later
    usage.count(revision_pk=7, client="agent", level=2)
    [taken] = usage.pop()
    assert (taken.level1, taken.level2) == (2, 1)
    assert _held() == 0


@pytest.mark.usefixtures("no_wait")
def test_counts_a_dropped_connection_did_not_answer_go_again(
    shared: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    usage.count(revision_pk=7, client="agent", level=1)
    usage.settle()
    link = usage._writer._link

    def lost(*args: Any, **kwargs: Any) -> None:  # the connection is gone: nothing arrives
        pass

    def no_reply(*args: Any, **kwargs: Any) -> None:
        raise redis.ConnectionError("Connection closed by server.")

    monkeypatch.setattr(link, "send_packed_command", lost)
    monkeypatch.setattr(link, "read_response", no_reply)
    usage.count(revision_pk=7, client="agent", level=1)  # written into a dead connection
    usage.count(revision_pk=7, client="agent", level=2)  # its reply is missing: both kept
    monkeypatch.setattr(usage, "_redis_down_until", 0.0)  # RETRY_SECONDS later
    usage.count(revision_pk=7, client="agent", level=2)  # a new connection: all of them
    assert usage._writer._link is not link
    usage.settle()
    [taken] = usage.pop()
    assert (taken.level1, taken.level2) == (2, 2)
    assert _held() == 0
