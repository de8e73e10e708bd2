"""Level 1 ``arguments`` cannot make the server build an unbounded answer (docs/contract.md §5,
§11)."""

from __future__ import annotations

import tracemalloc

from skills_app.domain.limits import MAX_BODY_BYTES
from skills_app.domain.render import MAX_RENDERED_BYTES
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env, publish

RECALL = "/v1/recall"
BOMB = "$ARGUMENTS" * (MAX_BODY_BYTES // len("$ARGUMENTS"))


def test_an_amplifying_body_answers_413_without_building_the_answer(
    env: Env, api_for: ApiFactory
) -> None:
    publish(env.owner, env.personal, slug="bomb", instruction_body=BOMB, components=())
    api = api_for(env.owner)
    assert api.get(RECALL, {"slug": "bomb"}).status_code == 200  # the body itself is fine
    tracemalloc.start()
    try:
        response = api.get(RECALL, {"slug": "bomb", "arguments": "x" * 10_000})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert response.status_code == 413
    assert error_code(response) == "RENDERED_TOO_LARGE"
    assert response.json()["error"]["details"]["limit"] == MAX_RENDERED_BYTES
    assert len(response.content) < 1024
    # A full render is ~65 MB (and its JSON as much again); the request stays in single MBs.
    assert peak < 8 * 1024 * 1024, peak


def test_an_answer_just_under_the_cap_is_rendered(env: Env, api_for: ApiFactory) -> None:
    publish(env.owner, env.personal, slug="big", instruction_body="$ARGUMENTS" * 26, components=())
    arguments = "y" * 10_000  # 26 x 10,000 bytes = 260,000 < 262,144
    data = api_for(env.owner).get(RECALL, {"slug": "big", "arguments": arguments}).json()["data"]
    assert data["rendered_body"] == arguments * 26


def test_level1_reports_an_unknown_context_variable_it_left_empty(
    env: Env, api_for: ApiFactory
) -> None:
    """docs/contract.md §11: an unknown ``${XMEMO_…}`` renders empty and the answer says why, in
    ``render_warnings``; REST and MCP send the same document."""
    publish(
        env.owner,
        env.personal,
        slug="ctx",
        instruction_body="In ${XMEMO_WORKSPACE} for ${XMEMO_TICKET}: $1\n",
        components=(),
    )
    api = api_for(env.owner)
    data = api.get(RECALL, {"slug": "ctx", "arguments": "now"}).json()["data"]
    assert data["rendered_body"] == f"In {env.personal.slug} for : now\n"
    [warning] = data["render_warnings"]
    assert warning["code"] == "UNKNOWN_CONTEXT_VARIABLE"
    assert warning["field"] == "instruction_body"
    assert "${XMEMO_TICKET}" in warning["message"]
    plain = api.get(RECALL, {"slug": "ctx"}).json()["data"]
    assert "render_warnings" not in plain
    assert "rendered_body" not in plain
    publish(env.owner, env.personal, slug="clean", instruction_body="$1\n", components=())
    clean = api.get(RECALL, {"slug": "clean", "arguments": "x"}).json()["data"]
    assert "render_warnings" not in clean
