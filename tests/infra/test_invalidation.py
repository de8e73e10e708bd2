"""The recall caches of mutable facts (resolutions, verified tokens) follow every committed
change, in this process and in any other, on PostgreSQL (LISTEN/NOTIFY, migration 0003)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from skills_app import errors
from skills_app.access import Actor
from skills_app.gateway.auth import clear_token_cache
from skills_app.infra import invalidation, requestctx
from skills_app.infra.cache import clear_local
from skills_app.selectors.recall import clear_resolutions
from skills_app.selectors.recall import recall as recall_answer
from tests.factories import build_env, make_token, publish
from tests.support import commit_elsewhere as _elsewhere
from tests.support import require_service, wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def recall(**kwargs: Any) -> Any:
    """Any level's answer, read freely by these tests."""
    return recall_answer(**kwargs)


@pytest.fixture(autouse=True)
def _postgresql_and_clean_caches() -> Iterator[None]:
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    clear_resolutions()
    clear_local()
    clear_token_cache()
    yield
    clear_resolutions()


def _eventually(check: Callable[[], bool], seconds: float = 2.0) -> float:
    """How long ``check`` took to hold."""
    started = time.monotonic()
    wait_until(check, seconds, interval=0.005, message="the change never showed")
    return time.monotonic() - started


def test_resolutions_are_cached_and_follow_commits_elsewhere() -> None:
    env = build_env()
    rev = publish(env.owner, env.personal, instruction_body="v1").revision
    actor = Actor(user=env.owner, via="api")
    assert invalidation.current() is not None
    assert recall(actor=actor, slug="deploy")["data"]["revision_id"] == rev.revision_id
    with CaptureQueriesContext(connection) as ctx:
        again = recall(actor=actor, slug="deploy")
    assert again["data"]["revision_id"] == rev.revision_id
    assert len(ctx.captured_queries) == 0, ctx.captured_queries  # resolution and content cached
    _elsewhere("UPDATE skills_app_skill SET status = 'archived' WHERE id = %s", [rev.skill_id])

    def gone() -> bool:
        try:
            recall(actor=actor, slug="deploy")
        except errors.NotFound:
            return True
        return False

    assert _eventually(gone) < 1.0


def test_a_membership_removed_elsewhere_ends_access_at_once() -> None:
    env = build_env()
    publish(env.member, env.team, slug="team-skill")
    actor = Actor(user=env.member2, via="api")
    recall(actor=actor, slug="team-skill")
    _elsewhere(
        "DELETE FROM skills_app_membership WHERE workspace_id = %s AND user_id = %s",
        [env.team.pk, env.member2.pk],
    )

    def denied() -> bool:
        try:
            recall(actor=actor, slug="team-skill")
        except errors.NotFound:
            return True
        return False

    assert _eventually(denied) < 1.0


def test_changes_in_this_process_show_at_once() -> None:
    env = build_env()
    publish(env.owner, env.personal, instruction_body="v1")
    actor = Actor(user=env.owner, via="api")
    recall(actor=actor, slug="deploy")
    newer = publish(env.owner, env.personal, instruction_body="v2").revision
    data = recall(actor=actor, slug="deploy")["data"]
    assert (data["revision_id"], data["instruction_body"]) == (newer.revision_id, "v2")


def test_a_token_revoked_elsewhere_stops_at_once(settings: Any) -> None:
    settings.XMEMO_AUTH_CACHE_SECONDS = 3600  # the notification, not the TTL, must do it
    env = build_env()
    token, secret = make_token(env.owner)
    client = Client()
    auth = {"Authorization": f"Bearer {secret}"}
    assert client.get("/v1/workspaces", headers=auth).status_code == 200
    _elsewhere("UPDATE skills_app_apitoken SET revoked_at = now() WHERE id = %s", [token.pk])
    took = _eventually(lambda: client.get("/v1/workspaces", headers=auth).status_code == 401)
    assert took < 1.0


def test_no_caching_inside_a_transaction() -> None:
    from django.db import transaction

    build_env()
    with transaction.atomic():
        assert invalidation.current() is None
    assert invalidation.current() is not None


def test_pinned_reads_are_cached_and_follow_state_changes_elsewhere() -> None:
    env = build_env()
    rev = publish(env.owner, env.personal).revision
    actor = Actor(user=env.owner, via="api")
    pinned = recall(actor=actor, slug="deploy", revision_id=rev.revision_id)
    assert pinned["data"]["state"] == "published"
    with CaptureQueriesContext(connection) as ctx:
        recall(actor=actor, slug="deploy", revision_id=rev.revision_id)
    assert len(ctx.captured_queries) == 0
    _elsewhere("UPDATE skills_app_skillrevision SET state = 'deprecated' WHERE id = %s", [rev.pk])

    def deprecated() -> bool:
        data = recall(actor=actor, slug="deploy", revision_id=rev.revision_id)["data"]
        return bool(data["state"] == "deprecated")

    assert _eventually(deprecated) < 1.0


def test_a_token_in_use_does_not_flush_every_processs_caches() -> None:
    """Using a token writes its ``last_used_at`` (at most once a minute per token and process).
    That write changes nothing recall resolves: had it notified, every process's caches would
    be flushed once a minute for every token in use, which with many agents is never cached.
    Any other change to a token still notifies (and a revocation stops it at once, above)."""
    token, _ = make_token(build_env().owner)
    assert invalidation.current() is not None
    before = invalidation.current()
    _elsewhere("UPDATE skills_app_apitoken SET last_used_at = now() WHERE id = %s", [token.pk])
    time.sleep(0.3)
    assert invalidation.current() == before
    _elsewhere("UPDATE skills_app_apitoken SET scopes = '[]'::jsonb WHERE id = %s", [token.pk])
    _eventually(lambda: invalidation.current() != before)


def test_a_label_moved_elsewhere_changes_the_cached_level1_answers() -> None:
    """Labels are part of every Level 1 answer (docs/contract.md §18): the label table NOTIFYs
    too (migration 0022), so another process's move shows in the next answer here."""
    env = build_env()
    first = publish(env.owner, env.personal, instruction_body="v1").revision
    second = publish(env.owner, env.personal, instruction_body="v2").revision
    actor = Actor(user=env.owner, via="api")
    assert recall(actor=actor, slug="deploy")["data"]["labels"] == []
    with CaptureQueriesContext(connection) as ctx:
        recall(actor=actor, slug="deploy")
    assert len(ctx.captured_queries) == 0  # cached
    _elsewhere(
        "INSERT INTO skills_app_skilllabel (skill_id, workspace_id, name, revision_id, moved_at)"
        " VALUES (%s, %s, 'production', %s, now())",
        [second.skill_id, env.personal.pk, second.pk],
    )
    assert (
        _eventually(lambda: recall(actor=actor, slug="deploy")["data"]["labels"] == ["production"])
        < 1.0
    )
    by_label = recall(actor=actor, slug="deploy", label="production")["data"]
    assert by_label["revision_id"] == second.revision_id
    _elsewhere(
        "UPDATE skills_app_skilllabel SET revision_id = %s WHERE name = 'production'", [first.pk]
    )

    def moved() -> bool:
        return recall(actor=actor, slug="deploy", label="production")["data"]["revision_id"] == (
            first.revision_id
        )

    assert _eventually(moved) < 1.0
    assert recall(actor=actor, slug="deploy")["data"]["labels"] == []


_INSERT_LABEL = (
    "INSERT INTO skills_app_skilllabel (skill_id, workspace_id, name, revision_id, moved_at)"
)


def test_the_database_keeps_a_label_on_its_own_skill() -> None:
    env = build_env()
    deploy = publish(env.owner, env.personal).revision
    other = publish(env.owner, env.personal, slug="other").revision
    with pytest.raises(psycopg.errors.IntegrityConstraintViolation):
        _elsewhere(
            f"{_INSERT_LABEL} VALUES (%s, %s, 'production', %s, now())",
            [deploy.skill_id, env.personal.pk, other.pk],
        )
    with pytest.raises(psycopg.errors.CheckViolation):
        _elsewhere(
            f"{_INSERT_LABEL} VALUES (%s, %s, 'latest', %s, now())",
            [deploy.skill_id, env.personal.pk, deploy.pk],
        )


@pytest.fixture
def socket_polls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per poll of the LISTEN socket, in this process."""
    polls: list[int] = []
    waiting = invalidation._waiting

    def counted(*args: Any) -> int:
        polls.append(1)
        return waiting(*args)

    monkeypatch.setattr(invalidation, "_waiting", counted)
    return polls


def test_a_level1_request_polls_the_socket_once(settings: Any, socket_polls: list[int]) -> None:
    """The token check and the resolution both ask for the generation: one poll answers both."""
    settings.XMEMO_AUTH_CACHE_SECONDS = 3600
    env = build_env()
    publish(env.owner, env.personal)
    _, secret = make_token(env.owner)
    client, auth = Client(), {"Authorization": f"Bearer {secret}"}
    assert client.get("/v1/recall", {"slug": "deploy"}, headers=auth).status_code == 200
    socket_polls.clear()  # token and resolution cached from here on
    for _ in range(3):
        assert client.get("/v1/recall", {"slug": "deploy"}, headers=auth).status_code == 200
    assert len(socket_polls) == 3


def test_within_a_request_a_change_here_or_a_transaction_still_counts(
    socket_polls: list[int],
) -> None:
    from django.db import transaction

    build_env()
    requestctx.begin("test")
    try:
        first = invalidation.current()
        assert first is not None
        assert invalidation.current() == first
        assert len(socket_polls) == 1
        invalidation.listener.bump()  # an ORM change in this process: polled again
        assert invalidation.current() == first + 1
        assert len(socket_polls) == 2
        with transaction.atomic():
            assert invalidation.current() is None
    finally:
        requestctx.end()
    assert invalidation.current() is not None
    assert len(socket_polls) == 3


def test_a_warm_level1_body_is_served_without_its_content_or_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The resolution carries its body's key: a cached body needs neither the revision's
    content nor the key worked out again; a change still serves the new body."""
    from skills_app.selectors.recall import content, resolution, routing
    from skills_app.selectors.recall.routing import recall_encoded

    env = build_env()
    publish(env.owner, env.personal, instruction_body="v1")
    actor = Actor(user=env.owner, via="api")
    first = recall_encoded(actor=actor, slug="deploy")
    built: list[str] = []
    root_content, root_key = content._root_content, resolution._root_key

    def counted_content(revision_id: str, revision_pk: int) -> Any:
        built.append("content")
        return root_content(revision_id, revision_pk)

    def counted_key(target: Any, resolved_by: str) -> str:
        built.append("key")
        return root_key(target, resolved_by)

    monkeypatch.setattr(routing, "_root_content", counted_content)
    monkeypatch.setattr(resolution, "_root_key", counted_key)
    assert recall_encoded(actor=actor, slug="deploy") == first
    assert built == []
    newer = publish(env.owner, env.personal, instruction_body="v2").revision
    answer = recall_encoded(actor=actor, slug="deploy")
    assert newer.revision_id.encode() in answer.body
    assert answer.etag != first.etag
    assert built == ["key", "content"]
