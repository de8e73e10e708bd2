"""An answer sent before is sent again on the event loop (``fast.Kept``), and stops being sent
the moment anything it was read from changes — here or in another process — or its token does.

"Elsewhere" is another connection committing with no Django signal (``commit_elsewhere``): only
the LISTEN of the MCP service's event loop can hear it, so each attack below would succeed if
that listener were deaf, lost, or ignored."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from django.db import connection

from skills_app.infra import invalidation, usage
from skills_app.mcp import fast
from tests.factories import build_env, make_token, make_user, personal_ws, publish
from tests.mcp.conftest import MODERN, RECALL, call_body, call_headers
from tests.support import commit_elsewhere, require_service, wait_until

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _postgresql() -> None:
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")


@pytest.fixture
def hops(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Per request the fast path answered: how many times it entered the database thread."""
    seen: list[int] = []
    original_answer, original_hop = fast.answer, fast.in_db_thread
    entered = [0]

    async def hop(*args: Any, **kwargs: Any) -> Any:
        entered[0] += 1
        return await original_hop(*args, **kwargs)

    async def answer(*args: Any, **kwargs: Any) -> Any:
        entered[0] = 0
        response = await original_answer(*args, **kwargs)
        if response is not None:
            seen.append(entered[0])
        return response

    monkeypatch.setattr(fast, "in_db_thread", hop)
    monkeypatch.setattr(fast, "answer", answer)
    return seen


def _call(url: str, secret: str, era: str = MODERN, request_id: Any = 1, **arguments: Any) -> Any:
    return httpx.post(
        f"{url}/mcp",
        content=call_body(RECALL, arguments or {"slug": "deploy"}, era, request_id=request_id),
        headers=call_headers(secret, era=era),
        timeout=30,
    )


def _warm(url: str, secret: str, hops: list[int], **arguments: Any) -> None:
    """Call until an answer comes from the loop (the first opens the listener, the next keeps
    the answer)."""
    for n in range(5):
        reply = _call(url, secret, request_id=n, **arguments)
        assert reply.status_code == 200, reply.text
        if hops and hops[-1] == 0:
            return
    pytest.fail(f"never answered from the loop: {hops}")


def test_an_answer_asked_again_is_sent_from_the_loop_byte_for_byte(
    live_url: str, settings: Any, hops: list[int], era: str
) -> None:
    user = make_user()
    publish(user, personal_ws(user), slug="deploy", name="Déploiement")
    _, secret = make_token(user)
    replies = [_call(live_url, secret, era, request_id) for request_id in (1, "deux", 3, 4)]
    assert hops[-2:] == [0, 0], hops  # the database thread was not entered
    assert hops[0] == 1
    settings.XMEMO_MCP_FAST_PATH = False  # the SDK's own answers, for the same ids
    for request_id, reply in zip((1, "deux", 3, 4), replies, strict=True):
        sdk = _call(live_url, secret, era, request_id)
        assert (reply.status_code, reply.content) == (sdk.status_code, sdk.content)
        assert reply.headers["content-type"] == sdk.headers["content-type"]


def test_a_token_revoked_elsewhere_is_refused_at_once(
    live_url: str, settings: Any, hops: list[int]
) -> None:
    settings.XMEMO_AUTH_CACHE_SECONDS = 3600  # the notification, not the lifetime, must do it
    user = make_user()
    publish(user, personal_ws(user))
    token, secret = make_token(user)
    _warm(live_url, secret, hops)
    commit_elsewhere("UPDATE skills_app_apitoken SET revoked_at = now() WHERE id = %s", [token.pk])
    wait_until(lambda: _call(live_url, secret).status_code == 401, 1.0, interval=0.005)


@pytest.mark.parametrize("change", ["archived", "membership"])
def test_what_changes_elsewhere_is_answered_anew_at_once(
    live_url: str, settings: Any, hops: list[int], change: str
) -> None:
    settings.XMEMO_AUTH_CACHE_SECONDS = 3600
    env = build_env()
    revision = publish(env.member, env.team, slug="team-skill").revision
    _, secret = make_token(env.member2)
    _warm(live_url, secret, hops, slug="team-skill")
    if change == "archived":
        sql, params = (
            "UPDATE skills_app_skill SET status = 'archived' WHERE id = %s",
            [revision.skill_id],
        )
    else:
        sql = "DELETE FROM skills_app_membership WHERE workspace_id = %s AND user_id = %s"
        params = [env.team.pk, env.member2.pk]
    commit_elsewhere(sql, params)

    def refused() -> bool:
        result = _call(live_url, secret, slug="team-skill").json()["result"]
        return bool(result["isError"]) and "NOT_FOUND" in result["content"][0]["text"]

    wait_until(refused, 1.0, interval=0.005)


def test_a_lost_listener_sends_nothing_again(live_url: str, settings: Any, hops: list[int]) -> None:
    """Its connection killed, the loop's listener hears nothing more: answers are made anew (a
    revocation then still lands) until a new listener is heard from."""
    settings.XMEMO_AUTH_CACHE_SECONDS = 3600
    user = make_user()
    publish(user, personal_ws(user))
    token, secret = make_token(user)
    _warm(live_url, secret, hops)
    _kill_listener()
    commit_elsewhere("UPDATE skills_app_apitoken SET revoked_at = now() WHERE id = %s", [token.pk])
    wait_until(lambda: _call(live_url, secret).status_code == 401, 1.0, interval=0.005)


def test_a_new_listener_takes_over_after_a_loss(live_url: str, hops: list[int]) -> None:
    user = make_user()
    publish(user, personal_ws(user))
    _, secret = make_token(user)
    _warm(live_url, secret, hops)
    _kill_listener()
    hops.clear()
    _warm(live_url, secret, hops)
    assert len(_listeners()) == 1


_LISTENERS = "SELECT pid FROM pg_stat_activity WHERE application_name = %s AND datname = %s"


def _listeners() -> list[Any]:
    with connection.cursor() as cursor:
        cursor.execute(
            _LISTENERS, [invalidation.LOOP_LISTENER_NAME, connection.settings_dict["NAME"]]
        )
        return cursor.fetchall()


def _kill_listener() -> None:
    """End the loop listener's connection, as a restart or a network cut of the database would."""
    name = [invalidation.LOOP_LISTENER_NAME, connection.settings_dict["NAME"]]
    commit_elsewhere(f"SELECT pg_terminate_backend(pid) FROM ({_LISTENERS}) AS x", name)
    wait_until(lambda: not _listeners(), 5.0, message="the listener lives on")


def test_the_rate_limit_counts_answers_sent_again(
    live_url: str, settings: Any, hops: list[int]
) -> None:
    user = make_user()
    publish(user, personal_ws(user))
    _, secret = make_token(user)
    settings.XMEMO_RATE_LIMIT = "4/min"
    results = [_call(live_url, secret, request_id=n).json()["result"] for n in range(5)]
    assert [r["isError"] for r in results] == [False] * 4 + [True]
    assert "RATE_LIMITED" in results[-1]["content"][0]["text"]
    assert hops[-1] == 0  # refused on the loop, as counted there


def test_answers_sent_again_are_counted_as_served(
    live_url: str, settings: Any, hops: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.XMEMO_USAGE = True
    counted: list[tuple[int, str, int]] = []
    monkeypatch.setattr(
        usage, "count", lambda **kw: counted.append((kw["revision_pk"], kw["client"], kw["level"]))
    )
    user = make_user()
    revision = publish(user, personal_ws(user)).revision
    _, secret = make_token(user, name="agent-7")
    for n in range(4):
        assert _call(live_url, secret, request_id=n).status_code == 200
    assert 0 in hops
    assert counted == [(revision.pk, "agent-7", 1)] * 4


def test_a_search_is_never_sent_again(live_url: str, hops: list[int]) -> None:
    """Level 0 reads an index built beside the database: its answer may change unheard."""
    user = make_user()
    publish(user, personal_ws(user))
    _, secret = make_token(user)
    for n in range(4):
        assert _call(live_url, secret, request_id=n, query="deploy").status_code == 200
    assert hops == [1, 1, 1, 1]


def test_nothing_is_sent_again_with_the_recall_caches_off(
    live_url: str, settings: Any, hops: list[int]
) -> None:
    settings.XMEMO_RECALL_CACHE = False
    user = make_user()
    publish(user, personal_ws(user))
    _, secret = make_token(user)
    for n in range(4):
        assert _call(live_url, secret, request_id=n).status_code == 200
    assert hops == [1, 1, 1, 1]


def test_another_callers_kept_answer_is_not_theirs(live_url: str, hops: list[int]) -> None:
    """Kept per token: a second token of someone without access reads nothing the first made."""
    env = build_env()
    publish(env.member, env.team, slug="team-skill")
    _, member_secret = make_token(env.member)
    _, outsider_secret = make_token(env.outsider)
    _warm(live_url, member_secret, hops, slug="team-skill")
    result = _call(live_url, outsider_secret, slug="team-skill").json()["result"]
    assert result["isError"] is True
    assert "NOT_FOUND" in result["content"][0]["text"]
