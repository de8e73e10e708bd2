"""Each fast path on a private API, switched off, answers what it answers switched on.

docs/operations.md ("Fast paths on private APIs") lists the machinery, the private API each
piece leans on and the setting that runs it on its plain fallback, for the day an upgrade breaks
one (``tests/infra/test_private_apis*.py`` then say which). These tests run the fallbacks: the
same answer, by the plain way. The MCP fast path's comparison lives beside it
(``tests/mcp/test_fast.py``, every request with ``XMEMO_MCP_FAST_PATH`` on and off).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import connection

from skills_app.access import Actor
from skills_app.infra import cache as recall_cache
from skills_app.infra import invalidation, redis_cache
from skills_app.selectors.recall import clear_resolutions, recall
from tests.factories import make_user, personal_ws, publish
from tests.support import require_service


def _postgresql() -> None:
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")


def _prepared_statements() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        (count,) = cursor.fetchone()
    return int(count)


def _recall_fresh(actor: Actor) -> Any:
    """A recall that the caches of this process do not answer."""
    clear_resolutions()
    recall_cache.clear_local()
    return recall(actor=actor, slug="deploy")


# --- infra/db.py: XMEMO_PREPARED_STATEMENTS ------------------------------------------------------


@pytest.mark.django_db(transaction=True)  # committed: a new session sees the skill
def test_recall_without_prepared_statements_answers_the_same(settings: Any) -> None:
    _postgresql()
    user = make_user()
    publish(user, personal_ws(user), slug="deploy", instruction_body="v1")
    actor = Actor(user=user, via="api")
    settings.XMEMO_PREPARED_STATEMENTS = True
    prepared = _recall_fresh(actor)
    before = _prepared_statements()
    assert before > 0  # the fast path ran: the resolution query is prepared on this session
    connection.close()  # a new session: nothing prepared on it yet
    settings.XMEMO_PREPARED_STATEMENTS = False
    assert _recall_fresh(actor) == prepared
    assert _prepared_statements() == 0  # Django's own client-binding cursor: nothing prepared


# --- infra/invalidation.py: XMEMO_RECALL_CACHE ---------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_recall_without_the_caches_of_mutable_facts_answers_the_same(settings: Any) -> None:
    _postgresql()
    user = make_user()
    publish(user, personal_ws(user), slug="deploy", instruction_body="v1")
    actor = Actor(user=user, via="api")
    settings.XMEMO_RECALL_CACHE = True
    assert invalidation.current() is not None  # LISTEN in force: resolutions are cached
    cached = [_recall_fresh(actor), recall(actor=actor, slug="deploy")]
    settings.XMEMO_RECALL_CACHE = False
    assert invalidation.current() is None  # nothing trusts a generation: every read asks
    assert [_recall_fresh(actor), recall(actor=actor, slug="deploy")] == cached


# --- infra/cache.py: XMEMO_RECALL_LOCAL_CACHE_BYTES=0 -------------------------------------------


@pytest.mark.django_db
def test_recall_without_the_in_process_content_cache_answers_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    user = make_user()
    publish(user, personal_ws(user), slug="deploy", instruction_body="v1")
    actor = Actor(user=user, via="api")
    kept = _recall_fresh(actor)
    assert len(recall_cache.local_cache) > 0
    # What XMEMO_RECALL_LOCAL_CACHE_BYTES=0 builds at import: a cache that keeps nothing.
    monkeypatch.setattr(recall_cache, "local_cache", recall_cache.ByteBoundedLRU(0))
    assert _recall_fresh(actor) == kept
    assert recall(actor=actor, slug="deploy") == kept
    assert len(recall_cache.local_cache) == 0


# --- infra/redis_cache.py: XMEMO_REDIS_SHARED_POOLS ---------------------------------------------


def test_the_redis_cache_with_djangos_own_pools_reads_what_it_wrote(settings: Any) -> None:
    location = django_settings.CACHES["default"].get("LOCATION")
    require_service("Redis", bool(location), "set REDIS_URL so the cache is Redis")
    settings.XMEMO_REDIS_SHARED_POOLS = False
    first: Any = redis_cache.TolerantRedisCache(str(location), {})  # private attributes below
    second: Any = redis_cache.TolerantRedisCache(str(location), {})
    first.set("fallback-probe", {"answer": [1, 2]}, 30)
    assert second.get("fallback-probe") == {"answer": [1, 2]}
    shared = {id(pools) for pools in redis_cache._POOLS.values()}
    assert id(first._cache._pools) not in shared  # Django's own dict, one per cache object
    assert first._cache._pools is not second._cache._pools
    settings.XMEMO_REDIS_SHARED_POOLS = True
    assert redis_cache.TolerantRedisCache(str(location), {}).get("fallback-probe") == {
        "answer": [1, 2]
    }
    first.delete("fallback-probe")
