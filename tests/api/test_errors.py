"""One error envelope for every failure, DRF's and Django's own included (docs/contract.md §7)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env


def test_unknown_api_path_answers_the_envelope(
    env: Env, api_for: ApiFactory, settings: Any
) -> None:
    for debug in (True, False):
        settings.DEBUG = debug
        response = api_for(env.owner).get("/v1/no/such/thing")
        assert response.status_code == 404
        assert response["Content-Type"] == "application/json"
        assert error_code(response) == "NOT_FOUND"
        trailing = Client().get("/v1/skills/")
        assert trailing.status_code in (401, 404)
        assert error_code(trailing) in ("NOT_FOUND", "AUTHENTICATION_REQUIRED")


def test_method_not_allowed(env: Env, api_for: ApiFactory) -> None:
    response = api_for(env.owner).delete("/v1/skills")
    assert response.status_code == 405
    assert error_code(response) == "METHOD_NOT_ALLOWED"
    assert "GET" in response["Allow"]


def test_malformed_json_is_a_validation_error(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    response = api.client.post(
        "/v1/skills/save",
        "{not json",
        content_type="application/json",
        headers={"Authorization": f"Bearer {api.secret}"},
    )
    assert response.status_code == 400
    assert error_code(response) == "VALIDATION_ERROR"


def test_deeply_nested_json_is_a_validation_error(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    deep = "[" * 100_000 + "]" * 100_000
    response = api.client.post(
        "/v1/skills/save",
        '{"frontmatter": ' + deep + "}",
        content_type="application/json",
        headers={"Authorization": f"Bearer {api.secret}"},
    )
    assert response.status_code == 400
    assert error_code(response) == "VALIDATION_ERROR"


def test_other_media_types_are_unsupported(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    response = api.client.post(
        "/v1/workspaces",
        "slug=x&name=y",
        content_type="application/x-www-form-urlencoded",
        headers={"Authorization": f"Bearer {api.secret}"},
    )
    assert response.status_code == 415
    assert error_code(response) == "UNSUPPORTED_FORMAT"


@pytest.mark.parametrize(
    "path",
    ["/v1/skills/skill_%00x", "/v1/revisions/rev_%00/components/a.md", "/v1/skills?state=%00"],
)
def test_nul_bytes_in_paths_never_reach_the_database(
    env: Env, api_for: ApiFactory, path: str
) -> None:
    response = api_for(env.owner).get(path)
    assert response.status_code == 400
    assert error_code(response) == "VALIDATION_ERROR"
