"""Every /v1/ failure answers the JSON envelope, CSRF included (docs/contract.md §7)."""

from __future__ import annotations

import json

from django.test import Client, RequestFactory

from skills_app.models import Workspace
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env
from xmemo.urls import csrf_failure


def test_bearer_post_and_patch_to_an_unknown_path_answer_404_envelope(
    env: Env, api_for: ApiFactory
) -> None:
    api = api_for(env.owner)
    api.client = Client(enforce_csrf_checks=True)
    for call in (api.post, api.patch):
        answer = call("/v1/no-such-thing", {"x": 1})
        assert answer.status_code == 404, answer.content[:200]
        assert answer["Content-Type"] == "application/json"
        assert error_code(answer) == "NOT_FOUND"
    deleted = api.delete("/v1/no/such/thing")
    assert deleted.status_code == 404
    assert error_code(deleted) == "NOT_FOUND"


def test_bearer_wrong_method_on_a_real_path_answers_405_envelope(
    env: Env, api_for: ApiFactory
) -> None:
    api = api_for(env.owner)
    api.client = Client(enforce_csrf_checks=True)
    for call, path in ((api.patch, "/v1/tokens"), (api.post, "/v1/recall")):
        answer = call(path, {})
        assert answer.status_code == 405, answer.content[:200]
        assert error_code(answer) == "METHOD_NOT_ALLOWED"


def test_a_session_post_without_csrf_token_is_still_refused_with_the_envelope(
    env: Env,
) -> None:
    env.owner.set_password("pw")
    env.owner.save()
    client = Client(enforce_csrf_checks=True)
    assert client.login(username=env.owner.username, password="pw")
    answer = client.post(
        "/v1/workspaces",
        json.dumps({"slug": "csrf-made", "name": "x"}),
        content_type="application/json",
    )
    assert answer.status_code == 403, answer.content[:200]
    assert answer["Content-Type"] == "application/json"
    assert error_code(answer) == "PERMISSION_DENIED"
    assert not Workspace.objects.filter(slug="csrf-made").exists()


def test_a_csrf_failure_under_v1_answers_the_envelope(rf: RequestFactory) -> None:
    answer = csrf_failure(rf.post("/v1/workspaces"), reason="CSRF cookie not set.")
    assert answer.status_code == 403
    assert json.loads(answer.content)["error"]["code"] == "PERMISSION_DENIED"
    page = csrf_failure(rf.post("/login/"), reason="CSRF cookie not set.")
    assert page.status_code == 403
    assert page["Content-Type"].startswith("text/html")
