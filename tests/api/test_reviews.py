"""The review conversation over REST (docs/contract.md §7, §16): exact shapes, 404 across
workspaces, clear
errors for bad input with nothing stored."""

from __future__ import annotations

from skills_app.models import AuditEntry, RevisionComment, SkillRevision
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env, make_team, make_user, save


def _comments(rev: SkillRevision) -> str:
    return f"/v1/revisions/{rev.revision_id}/comments"


def test_members_comment_and_read_the_thread(env: Env, api_for: ApiFactory) -> None:
    rev = save(env.member, env.team, intent="publish", instruction_body="a\nb <x>\n").revision
    reviewer = api_for(env.admin)
    made = reviewer.post(_comments(rev), {"body": "Say *why* <script>x</script>", "line": 2})
    assert made.status_code == 201, made.content
    body = made.json()
    assert set(body) == {
        "comment_id", "revision_id", "author", "imported_author", "body", "body_html", "line",
        "action", "created_at"
    }  # fmt: skip
    assert (body["author"], body["line"], body["action"]) == (env.admin.username, 2, None)
    assert "<em>why</em>" in body["body_html"]
    assert "<script>" not in body["body_html"]
    listed = api_for(env.member, scopes=["skills:read"]).get(_comments(rev))
    assert listed.status_code == 200
    assert [c["comment_id"] for c in listed.json()["results"]] == [body["comment_id"]]


def test_bad_comments_are_clear_errors_and_store_nothing(env: Env, api_for: ApiFactory) -> None:
    rev = save(env.member, env.team, intent="publish").revision
    other_team = make_team(env.outsider)
    elsewhere = save(env.outsider, other_team, intent="publish").revision
    api = api_for(env.member)
    cases = [
        (api.post(_comments(elsewhere), {"body": "hi"}), 404, "NOT_FOUND"),
        (api.get(_comments(elsewhere)), 404, "NOT_FOUND"),
        (api.post(_comments(rev), {"body": ""}), 400, "VALIDATION_ERROR"),
        (api.post(_comments(rev), {}), 400, "VALIDATION_ERROR"),
        (api.post(_comments(rev), {"body": "x", "line": 99}), 400, "VALIDATION_ERROR"),
        (api.post(_comments(rev), {"body": "x", "line": "two"}), 400, "VALIDATION_ERROR"),
        (
            api_for(env.member, scopes=["skills:read"]).post(_comments(rev), {"body": "x"}),
            403,
            "PERMISSION_DENIED",
        ),
    ]
    for response, status, code in cases:
        assert response.status_code == status, response.content
        assert error_code(response) == code
    assert not RevisionComment.objects.exists()
    assert not AuditEntry.objects.filter(action="skills.revision.comment").exists()


def test_request_changes_then_the_answer_links_to_the_thread(env: Env, api_for: ApiFactory) -> None:
    rev = save(env.member, env.team, intent="publish").revision
    admin = api_for(env.admin)
    url = f"/v1/revisions/{rev.revision_id}/request_changes"
    missing = admin.post(url, {})
    assert missing.status_code == 400
    assert error_code(missing) == "VALIDATION_ERROR"
    assert missing.json()["error"]["details"]["field"] == "comment"
    denied = api_for(env.member2).post(url, {"comment": "no"})
    assert denied.status_code == 403
    assert error_code(denied) == "PERMISSION_DENIED"
    moved = admin.post(url, {"comment": "Name the rollback command."})
    assert moved.status_code == 200, moved.content
    assert (moved.json()["state"], moved.json()["review_comment"]) == (
        "draft",
        "Name the rollback command.",
    )
    thread = api_for(env.member).get(_comments(rev)).json()["results"]
    assert [(c["action"], c["author"]) for c in thread] == [("request_changes", env.admin.username)]

    member = api_for(env.member)
    saved = member.post(
        "/v1/skills/save",
        {
            "workspace": env.team.slug,
            "slug": "deploy",
            "name": "Deploy runbook",
            "description": "How to deploy safely.",
            "instruction_body": "# Deploy\n\nRollback: `make rollback`.\n",
            "intent": "publish",
        },
    ).json()
    detail = member.get(f"/v1/revisions/{saved['revision_id']}").json()
    assert (detail["state"], detail["answers_revision_id"]) == ("proposed", rev.revision_id)


def test_two_approvals_over_the_api(env: Env, api_for: ApiFactory) -> None:
    owner = api_for(env.owner)
    ws_url = f"/v1/workspaces/{env.team.slug}"
    for bad in (0, 11, "two", None):
        response = owner.patch(ws_url, {"required_approvals": bad})
        assert response.status_code == 400, (bad, response.content)
        assert error_code(response) == "VALIDATION_ERROR"
    denied = api_for(env.member).patch(ws_url, {"required_approvals": 2})
    assert denied.status_code == 403
    changed = owner.patch(ws_url, {"required_approvals": 2})
    assert changed.status_code == 200
    assert changed.json()["required_approvals"] == 2

    admin2 = make_user()
    env.team.memberships.create(user=admin2, role="admin")
    rev = save(env.admin, env.team, intent="publish").revision
    url = f"/v1/revisions/{rev.revision_id}/approve"
    own = api_for(env.admin).post(url, {})
    assert own.status_code == 403
    assert error_code(own) == "PERMISSION_DENIED"
    first = api_for(admin2).post(url, {})
    assert first.status_code == 200
    assert first.json()["state"] == "proposed"
    again = api_for(admin2).post(url, {})
    assert again.status_code == 409
    assert error_code(again) == "CONFLICT"
    done = owner.post(url, {})
    assert done.status_code == 200
    assert done.json()["state"] == "published"
    assert [a["user"] for a in done.json()["approvals"]] == [admin2.username, env.owner.username]
    recall = api_for(env.member).get("/v1/recall", {"slug": "deploy", "workspace": env.team.slug})
    assert recall.json()["data"]["revision_id"] == rev.revision_id


def test_notification_preferences_over_the_api(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.member)
    assert api.get("/v1/notifications").json() == {
        "review_requests": True,
        "review_outcomes": True,
        "comments": True,
    }
    changed = api.patch("/v1/notifications", {"comments": False})
    assert changed.status_code == 200
    assert changed.json()["comments"] is False
    bad = api.patch("/v1/notifications", {"comments": "sometimes"})
    assert bad.status_code == 400
    assert error_code(bad) == "VALIDATION_ERROR"
    restricted = api_for(env.member, workspace=env.team).patch(
        "/v1/notifications", {"comments": True}
    )
    assert restricted.status_code == 403
    assert api.get("/v1/notifications").json()["comments"] is False
