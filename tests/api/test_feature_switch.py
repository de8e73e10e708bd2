"""The Cloud Skills switch holds on every skills endpoint (docs/contract.md §2).

Where ``cloud_skills_enabled`` is off, every skills endpoint answers 403 FEATURE_DISABLED, job
reads included; a call that spans several workspaces leaves the switched-off ones out and
answers 403 when none is left — never an empty 200 that reads as "you have no skills".
"""

from __future__ import annotations

from typing import Any

from skills_app.models import Workspace
from tests.api.conftest import Api, ApiFactory, error_code
from tests.factories import Env, publish

RECALL = "/v1/recall"


def _switch_off(*workspaces: Workspace) -> None:
    for workspace in workspaces:
        workspace.cloud_skills_enabled = False
        workspace.save()


def _assert_disabled(response: Any) -> None:
    assert response.status_code == 403, response.content
    assert error_code(response) == "FEATURE_DISABLED"


def _multi_workspace_calls(api: Api) -> list[Any]:
    return [
        api.get("/v1/skills"),
        api.get("/v1/skills", {"state": "published"}),
        api.get(RECALL, {"query": "deploy"}),
        api.get(RECALL, {"slug": "deploy"}),
        api.get(RECALL, {"slug": "no-such-skill"}),
    ]


def test_every_multi_workspace_call_answers_403_when_every_workspace_is_off(
    env: Env, api_for: ApiFactory
) -> None:
    publish(env.owner, env.personal)
    publish(env.owner, env.team, slug="team-deploy")
    api = api_for(env.owner)
    before = _multi_workspace_calls(api)
    assert [r.status_code for r in before] == [200, 200, 200, 200, 404]
    _switch_off(env.personal, env.team)
    for response in _multi_workspace_calls(api):
        _assert_disabled(response)
    _assert_disabled(api.get(RECALL, {"slug": f"{env.team.slug}/no-such-skill"}))
    _assert_disabled(api.get(RECALL, {"slug": "no-such-skill", "workspace": env.team.slug}))


def test_switched_off_workspaces_are_left_out_of_multi_workspace_calls(
    env: Env, api_for: ApiFactory
) -> None:
    publish(env.owner, env.personal, slug="deploy-mine")
    publish(env.owner, env.team, slug="deploy-team")
    _switch_off(env.personal)
    api = api_for(env.owner)
    listed = api.get("/v1/skills")
    assert listed.status_code == 200
    assert [s["slug"] for s in listed.json()["results"]] == ["deploy-team"]
    found = api.get(RECALL, {"query": "deploy"}).json()["data"]["results"]
    assert [hit["slug"] for hit in found] == ["deploy-team"]
    nothing = api.get(RECALL, {"query": "zzzz-nothing-matches"})
    assert (nothing.status_code, nothing.json()["data"]["results"]) == (200, [])
    _assert_disabled(api.get(RECALL, {"slug": "deploy-mine"}))


def test_a_token_restricted_to_a_switched_off_workspace_gets_403(
    env: Env, api_for: ApiFactory
) -> None:
    publish(env.owner, env.team)
    _switch_off(env.team)
    api = api_for(env.owner, workspace=env.team)
    for response in _multi_workspace_calls(api):
        _assert_disabled(response)


def test_job_reads_are_gated(
    env: Env, api_for: ApiFactory, django_capture_on_commit_callbacks: Any
) -> None:
    rev = publish(env.owner, env.team).revision
    api = api_for(env.owner)
    with django_capture_on_commit_callbacks(execute=True):
        job = api.post("/v1/exports", {"revision_id": rev.revision_id}).json()
    polled = api.get(f"/v1/jobs/{job['job_id']}")
    assert (polled.status_code, polled.json()["state"]) == (200, "succeeded")
    assert api.get(f"/v1/jobs/{job['job_id']}/download").status_code == 200
    _switch_off(env.team)
    _assert_disabled(api.get(f"/v1/jobs/{job['job_id']}"))
    _assert_disabled(api.get(f"/v1/jobs/{job['job_id']}/download"))
    # A stranger still learns nothing: 404, not 403.
    stranger = api_for(env.outsider).get(f"/v1/jobs/{job['job_id']}")
    assert (stranger.status_code, error_code(stranger)) == (404, "NOT_FOUND")
