"""The MCP layer without a transport: tool gates, argument checks, the Host/Origin allowlist and
the ASGI mount."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from mcp.server.transport_security import TransportSecurityMiddleware
from starlette.requests import Request

from skills_app import errors
from skills_app.access import Actor
from skills_app.gateway.save_payload import OPTIONAL_FIELDS, REQUIRED_TEXT
from skills_app.mcp.http import McpMount, transport_security
from skills_app.mcp.tools import SERVED_TOOLS, tool_run
from skills_app.mcp_profiles import contract, tool_spec
from skills_app.models import SkillRevision
from skills_app.selectors.recall import RecallArgs, recall
from tests.factories import Env, make_token, publish


def _actor(env: Env, scopes: list[str] | None = None, **kwargs: Any) -> Actor:
    token, _ = make_token(env.owner, scopes or ["skills:read", "skills:write"], **kwargs)
    return Actor(user=env.owner, token=token, via="mcp")


def _refusal(actor: Actor, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    with pytest.raises(errors.XmemoError) as refused:
        tool_run(name=name, actor=actor, arguments=arguments)
    return refused.value.as_dict()


def test_the_input_schemas_match_what_the_shared_functions_take() -> None:
    recall_params = set(RecallArgs.__annotations__)
    assert set(tool_spec("recall_cloud_skill")["input_schema"]["properties"]) == recall_params
    save_schema = tool_spec("save_cloud_skill")["input_schema"]
    assert set(save_schema["properties"]) == set(REQUIRED_TEXT + OPTIONAL_FIELDS)
    assert save_schema["required"] == list(REQUIRED_TEXT)
    outcome_schema = tool_spec("report_skill_outcome")["input_schema"]
    assert set(outcome_schema["properties"]) == {"revision_id", "outcome", "note"}
    assert set(SERVED_TOOLS) == {"recall_cloud_skill", "save_cloud_skill", "report_skill_outcome"}


def test_the_shipped_contract_follows_spec_12() -> None:
    profiles = contract()["profiles"]
    both = ["recall_cloud_skill", "save_cloud_skill", "report_skill_outcome"]
    assert profiles == {
        "cursor-plugin": both,
        "ordinary-full": both,
        "generic-public": [],
        "chatgpt-public": [],
        "claude-code": [],
    }
    assert "execute_cloud_skill" in contract()["tools"]  # described, exposed nowhere
    assert all("execute_cloud_skill" not in tools for tools in profiles.values())


@pytest.mark.parametrize(
    ("name", "arguments", "field"),
    [
        ("recall_cloud_skill", {"slug": 5}, "slug"),
        ("recall_cloud_skill", {"query": "x", "limit": 0}, "limit"),
        ("recall_cloud_skill", {"query": "x", "page": 2}, "page"),
        (
            "save_cloud_skill",
            {"workspace": "w", "slug": "s", "name": "n", "description": "d"},
            "instruction_body",
        ),
        (
            "save_cloud_skill",
            {
                "workspace": "w",
                "slug": "s",
                "name": "n",
                "description": "d",
                "instruction_body": "b",
                "components": [{"logical_path": "a.md", "type": "picture", "content": ""}],
            },
            "components[0].type",
        ),
    ],
)
def test_arguments_outside_the_input_schema_name_the_argument(
    env: Env, name: str, arguments: dict[str, Any], field: str
) -> None:
    error = _refusal(_actor(env), name, arguments)
    assert (error["code"], error["details"]) == ("VALIDATION_ERROR", {"field": field})
    assert field in error["message"]


def test_nul_characters_are_refused_before_the_database(env: Env) -> None:
    error = _refusal(_actor(env), "recall_cloud_skill", {"query": "dep\x00loy"})
    assert (error["code"], error["details"]) == ("VALIDATION_ERROR", {"field": "query"})


def test_the_contract_scope_is_checked_before_the_arguments(env: Env) -> None:
    error = _refusal(_actor(env, ["skills:write"]), "recall_cloud_skill", {"page": 1})
    assert error["code"] == "PERMISSION_DENIED"
    assert error["details"] == {"required_scope": "skills:read"}


def test_tool_calls_share_the_rest_rate_limit(env: Env, settings: Any) -> None:
    settings.XMEMO_RATE_LIMIT = "2/min"
    actor = _actor(env)
    for _ in range(2):
        tool_run(name="recall_cloud_skill", actor=actor, arguments={"query": "deploy"})
    error = _refusal(actor, "recall_cloud_skill", {"query": "deploy"})
    assert error["code"] == "RATE_LIMITED"
    assert error["details"]["limit"] == 2


def test_empty_optional_ids_mean_not_given_as_in_the_query_string(env: Env) -> None:
    rev = publish(env.owner, env.personal, slug="deploy").revision
    actor = _actor(env)
    answer: Any = tool_run(
        name="recall_cloud_skill",
        actor=actor,
        arguments={"slug": "deploy", "workspace": "", "revision_id": ""},
    )
    assert answer == recall(actor=actor, slug="deploy")
    assert answer["data"]["revision_id"] == rev.revision_id


def test_save_stores_the_revision_with_the_mcp_source(env: Env) -> None:
    answer: Any = tool_run(
        name="save_cloud_skill",
        actor=_actor(env),
        arguments={
            "workspace": env.personal.slug,
            "slug": "notes",
            "name": "Notes",
            "description": "Notes.",
            "instruction_body": "# Notes\n",
        },
    )
    assert SkillRevision.objects.get(revision_id=answer["revision_id"]).source == "mcp"


# --- Host/Origin allowlist ------------------------------------------------------------------------


def _verdict(headers: dict[str, str]) -> int | None:
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
    }
    middleware = TransportSecurityMiddleware(transport_security())
    response = anyio.run(middleware.validate_request, Request(scope))
    return None if response is None else response.status_code


@pytest.mark.parametrize(
    ("headers", "verdict"),
    [
        ({"Host": "127.0.0.1:8000"}, None),
        ({"Host": "localhost"}, None),
        ({"Host": "[::1]:9000", "Origin": "http://[::1]:9000"}, None),
        ({"Host": "skills.example.com"}, 421),
        ({"Host": "127.0.0.1:8000", "Origin": "https://evil.example"}, 403),
    ],
)
def test_the_default_allowlist_is_loopback_on_any_port(
    headers: dict[str, str], verdict: int | None
) -> None:
    assert _verdict(headers) == verdict


def test_configured_hosts_and_origins_are_allowed(settings: Any) -> None:
    settings.XMEMO_MCP_ALLOWED_HOSTS = ["skills.example.com", "10.0.0.5:8001"]
    settings.XMEMO_MCP_ALLOWED_ORIGINS = ["https://app.example.org"]
    assert _verdict({"Host": "skills.example.com", "Origin": "https://skills.example.com"}) is None
    assert _verdict({"Host": "10.0.0.5:8001", "Origin": "https://app.example.org"}) is None
    assert _verdict({"Host": "10.0.0.5:9999"}) == 421
    assert _verdict({"Host": "127.0.0.1:8000"}) == 421


def test_a_star_turns_the_host_check_off_for_a_proxy_that_pins_it(settings: Any) -> None:
    settings.XMEMO_MCP_ALLOWED_HOSTS = ["*"]
    assert _verdict({"Host": "anything.example", "Origin": "https://elsewhere.example"}) is None


# --- the ASGI mount -------------------------------------------------------------------------------


def test_without_the_lifespan_mcp_is_unavailable_and_django_still_answers() -> None:
    from xmemo.asgi import django_application

    async def get(path: str) -> httpx.Response:
        transport = httpx.ASGITransport(app=McpMount(django_application))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.get(path)

    unavailable = anyio.run(get, "/mcp")
    assert unavailable.status_code == 503
    assert unavailable.json()["error"]["code"] == "MCP_UNAVAILABLE"
    assert anyio.run(get, "/v1/no-such-endpoint").json()["error"]["code"] == "NOT_FOUND"
