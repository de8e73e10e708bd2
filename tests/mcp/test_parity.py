"""REST and MCP answer byte for byte alike (contract §12): the safety net of every refactor of the
shared encoding, envelope and authentication.

For each recall level, the save and the common errors, the REST response body is compared as
bytes with the text the MCP tool result carries, and both decode to the structured content.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from skills_app.services.labels import label_move
from tests.factories import actor_for, make_user, personal_ws, save
from tests.mcp.conftest import rest, tool_answer, with_mcp
from tests.mcp.test_http import PNG, RECALL, SAVE, _library, _payload, _token

pytestmark = pytest.mark.django_db(transaction=True)


def _text(result: types.CallToolResult) -> bytes:
    assert len(result.content) == 1
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text.encode("utf-8")


def _assert_bytes_alike(result: types.CallToolResult, body: bytes, status: int) -> None:
    assert _text(result) == body
    if result.structured_content is not None:  # a tool error is text only (SPEC §18)
        assert json.loads(body) == result.structured_content
    assert result.is_error == (status >= 400), (status, body)


async def _calls(client: Client, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    return [await client.call_tool(name, args) for name, args in calls]


def test_recall_levels_and_errors_are_byte_identical(live_url: str) -> None:
    user = make_user()
    lib = _library(user)
    ws = personal_ws(user)
    # Non-ASCII text and JSON-significant characters in what is answered.
    save(
        user,
        ws,
        slug="unicode",
        name="Ünïcödé “quoted” \\ slash",
        description='Déjà vu — 日本語 🚀 "quotes" and a\ttab.',
        instruction_body="# Ünïcödé\n\nLine\u2028separator, emoji 🚀, </script>\n",
        intent="publish",
    )
    latest = lib["latest"].revision_id
    label_move(
        actor=actor_for(user),
        skill=lib["first"].skill,
        name="rollback",
        revision_id=lib["first"].revision_id,
    )
    secret = _token(user)
    cases = [
        # Level 0: search.
        {"query": "deploy"},
        {"query": "unicode"},
        {"query": "shared", "workspace": lib["team"].slug, "limit": 1},
        # Level 1: published, qualified with arguments, pinned, latest fallback.
        {"slug": "deploy"},
        {"slug": "unicode"},
        {"slug": f"{user.username}/deploy", "arguments": "prod 'blue green' ünï"},
        {"slug": "deploy", "revision_id": lib["first"].revision_id},
        {"slug": "draft-only"},
        # Level 1 by label (docs/contract.md §18), with arguments too.
        {"slug": "deploy", "label": "rollback"},
        {"slug": "deploy", "label": "rollback", "arguments": "x"},
        # Level 2: a UTF-8 and a base64 resource.
        {"slug": "deploy", "revision_id": latest, "resource": "references/guide.md"},
        {"slug": "deploy", "revision_id": latest, "resource": "assets/logo.png"},
        # Errors.
        {"slug": "no-such-skill"},
        {"slug": "not a slug é"},
        {"slug": "shared"},
        {"slug": "deploy", "resource": "references/guide.md"},
        {"slug": "draft-only", "fallback": "none"},
        {"query": "   "},
        {"slug": "deploy", "label": "no-such-label"},
    ]
    results = with_mcp(live_url, secret, lambda c: _calls(c, [(RECALL, a) for a in cases]))
    for args, result in zip(cases, results, strict=True):
        response = rest(live_url, secret, "GET", "/v1/recall", params=args)
        _assert_bytes_alike(result, response.content, response.status_code)
    answers = [tool_answer(RECALL, r) for r in results]
    kinds = [a.get("kind") or a["error"]["code"] for a in answers]
    assert kinds == [
        "search",
        "search",
        "search",
        "root",
        "root",
        "root",
        "root",
        "root",
        "root",
        "root",
        "resource",
        "resource",
        "NOT_FOUND",
        "VALIDATION_ERROR",
        "AMBIGUOUS_SLUG",
        "REVISION_ID_REQUIRED",
        "NO_PUBLISHED_REVISION",
        "VALIDATION_ERROR",
        "LABEL_NOT_FOUND",
    ]
    by_label = results[8].structured_content["data"]
    assert (by_label["resolved_by"], by_label["revision_id"]) == ("label", lib["first"].revision_id)
    assert by_label["labels"] == ["rollback"]
    assert results[3].structured_content["data"]["labels"] == []
    assert results[9].structured_content["data"]["rendered_body"] == "# Deploy v1\n"
    assert results[5].structured_content["data"]["resolved_by"] == "published"
    assert results[6].structured_content["data"]["resolved_by"] == "pinned"
    assert results[7].structured_content["data"]["resolved_by"] == "latest_fallback"
    assert "🚀".encode() in _text(results[4])
    # Both doors carry the context-cost estimate; Level 0 states what Level 1 will load.
    [hit] = [h for h in results[0].structured_content["data"]["results"] if h["slug"] == "deploy"]
    root = results[3].structured_content["data"]
    assert hit["approx_tokens"] == root["approx_tokens"] > 0
    rendered = results[5].structured_content["data"]
    assert rendered["approx_tokens"] > root["approx_tokens"]
    binary = results[11].structured_content["data"]
    assert (binary["encoding"], base64.b64decode(binary["content"])) == ("base64", PNG)


def test_save_answers_and_errors_are_byte_identical(live_url: str) -> None:
    user = make_user()
    secret = _token(user)
    base = save(user, personal_ws(user), slug="stale").revision
    created = _payload(user.username, slug="release-mcp", name="Relëase 🚀")
    cases = [
        created,
        created,  # the same content again: unchanged, created false
        _payload(user.username, slug="stale", base_revision_id="rev_stale"),
        _payload(user.username, slug="Not A Slug é"),
        _payload(user.username, frontmatter={"license": "MIT", "bad": "a\x00b"}),
        _payload(user.username, frontmatter={"ke\x00y": "value"}),
        _payload("someone-elses"),
    ]
    results = with_mcp(live_url, secret, lambda c: _calls(c, [(SAVE, p) for p in cases]))
    # The REST twin of each call, in the same order, on a fresh skill for the created case.
    rest_cases = [_payload(user.username, slug="release-rest", name="Relëase 🚀"), *cases[1:]]
    rest_cases[1] = rest_cases[0]
    for payload, result in zip(rest_cases, results, strict=True):
        response = rest(live_url, secret, "POST", "/v1/skills/save", json=payload)
        body = response.content
        if not result.is_error:
            # Ids and hashes differ between the two skills (and their slugs, which warnings
            # name); the encoding must not.
            answer = json.loads(body.replace(b"release-rest", b"release-mcp"))
            mcp_answer = result.structured_content
            answer.update({k: mcp_answer[k] for k in ("skill_id", "revision_id")})
            answer["canonical_hash"] = mcp_answer["canonical_hash"]
            body = json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode()
            assert json.loads(response.content).keys() == mcp_answer.keys()
        _assert_bytes_alike(result, body, response.status_code)
    answers = [tool_answer(SAVE, r) for r in results]
    codes = [a.get("created", a.get("error", {}).get("code")) for a in answers]
    assert codes == [
        True,
        False,
        "CONFLICT",
        "VALIDATION_ERROR",
        "VALIDATION_ERROR",
        "VALIDATION_ERROR",
        "NOT_FOUND",
    ]
    assert answers[2]["error"]["details"]["latest_revision_id"] == base.revision_id


def test_prompts_and_resources_answer_what_level1_and_level2_answer(live_url: str) -> None:
    """A prompt's text is Level 1's rendered_body for its argument string; a resource's content
    is Level 2's, byte for byte (docs/contract.md §18)."""
    user = make_user()
    lib = _library(user)
    ws = personal_ws(user)
    save(
        user,
        ws,
        slug="cmd",
        intent="publish",
        frontmatter={"invoke": {"user": True}, "argument-names": ["a", "b"]},
        instruction_body="A=$a B=$b all=$ARGUMENTS n=$ARG_COUNT 🚀 ${XMEMO_REVISION_ID}\n",
    )
    secret = _token(user)
    argument_sets = [
        ({"a": "x", "b": "y z"}, "x 'y z'"),
        ({"a": "ünï 'q'"}, "'ünï '\"'\"'q'\"'\"''"),
        ({"b": "only"}, "'' only"),
        ({}, ""),
    ]
    uris = [
        f"skill://{user.username}/deploy/references/guide.md",
        f"skill://{user.username}/deploy/assets/logo.png",
        f"skill://{user.username}/deploy@{lib['latest'].revision_id}/assets/logo.png",
    ]

    async def body(client: Client) -> Any:
        prompts = [await client.get_prompt("cmd", values) for values, _ in argument_sets]
        reads = [await client.read_resource(uri) for uri in uris]
        return prompts, reads

    prompts, reads = with_mcp(live_url, secret, body)
    for (_, string), prompt in zip(argument_sets, prompts, strict=True):
        response = rest(
            live_url, secret, "GET", "/v1/recall", params={"slug": "cmd", "arguments": string}
        )
        content = prompt.messages[0].content
        assert isinstance(content, types.TextContent)
        assert content.text.encode() == response.json()["data"]["rendered_body"].encode()
    for uri, read in zip(uris, reads, strict=True):
        path = uri.split("/", 4)[4]
        response = rest(
            live_url,
            secret,
            "GET",
            "/v1/recall",
            params={"slug": "deploy", "revision_id": lib["latest"].revision_id, "resource": path},
        )
        level2 = response.json()["data"]
        [contents] = read.contents
        sent = contents.blob if isinstance(contents, types.BlobResourceContents) else contents.text
        assert sent.encode() == level2["content"].encode()
        assert contents.mime_type == level2["media_type"]
