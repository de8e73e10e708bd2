"""The OpenAPI schema at /v1/schema documents every endpoint, typed, and the docs render."""

from __future__ import annotations

import re

import yaml
from django.test import Client

from tests.api.test_isolation import PUBLIC, api_patterns, methods_of


def _schema() -> dict:
    response = Client().get("/v1/schema", headers={"Accept": "application/vnd.oai.openapi"})
    assert response.status_code == 200
    return yaml.safe_load(response.content)


def _openapi_path(route: str) -> str:
    route = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)
    return "/v1/" + route


def test_every_api_endpoint_is_in_the_schema(db: None) -> None:
    schema = _schema()
    assert schema["openapi"].startswith("3.")
    paths = schema["paths"]
    for name, pattern in api_patterns():
        if name in PUBLIC:
            continue
        path = _openapi_path(str(pattern.pattern))
        assert path in paths, f"{name}: {path} missing from the schema"
        for method in methods_of(pattern):
            operation = paths[path].get(method)
            assert operation is not None, f"{method.upper()} {path} missing"
            responses = operation["responses"]
            success = [code for code in responses if code.startswith("2")]
            assert success, f"{method.upper()} {path} documents no success response"
            for code in ("401", "404"):
                envelope = responses[code]["content"]["application/json"]["schema"]["$ref"]
                assert envelope.endswith("/ErrorEnvelope"), (path, code)
            assert operation.get("security"), f"{method.upper()} {path} has no security"


def test_request_and_response_bodies_are_typed(db: None) -> None:
    schema = _schema()
    components = schema["components"]["schemas"]
    save = schema["paths"]["/v1/skills/save"]["post"]
    request_ref = save["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    request = components[request_ref.rsplit("/", 1)[-1]]
    assert {"workspace", "slug", "name", "description", "instruction_body"} <= set(
        request["required"]
    )
    answer_ref = save["responses"]["201"]["content"]["application/json"]["schema"]["$ref"]
    answer = components[answer_ref.rsplit("/", 1)[-1]]
    assert set(answer["properties"]) == {
        "skill_id",
        "revision_id",
        "revision_number",
        "state",
        "canonical_hash",
        "created",
        "warnings",
    }
    # The bridge's endpoints (docs/contract.md §17).
    assert "get" in schema["paths"]["/v1/sync"]
    assert "get" in schema["paths"]["/v1/revisions/{revision_id}/bundle"]
    lint = schema["paths"]["/v1/skills/lint"]["post"]
    lint_ref = lint["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert set(components[lint_ref.rsplit("/", 1)[-1]]["properties"]) == {
        "errors",
        "warnings",
        "approx_tokens",
        "scan",
        "triggers",
    }
    recall = schema["paths"]["/v1/recall"]["get"]
    ref = recall["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    polymorphic = components[ref.rsplit("/", 1)[-1]]
    assert polymorphic["discriminator"]["propertyName"] == "kind"
    assert set(polymorphic["discriminator"]["mapping"]) == {"search", "root", "resource"}
    assert {p["name"] for p in recall["parameters"]} >= {
        "query",
        "slug",
        "workspace",
        "revision_id",
        "resource",
        "arguments",
        "fallback",
        "limit",
    }
    assert schema["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"


def test_interactive_docs_render_from_vendored_assets(db: None) -> None:
    response = Client().get("/v1/docs")
    assert response.status_code == 200
    html = response.content.decode()
    assert "swagger-ui" in html.lower()
    assert "/v1/schema" in html
    assert "cdn.jsdelivr" not in html
