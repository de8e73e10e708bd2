"""Skills, revisions, lifecycle actions, components and diff (docs/contract.md §7, §10)."""

from __future__ import annotations

import re

import pytest

from skills_app.models import AuditEntry, Skill, SkillRevision
from skills_app.services.skills import revision_transition
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env, actor_for, component, publish, save

SKILL_FIELDS = {
    "skill_id",
    "slug",
    "workspace",
    "scope",
    "status",
    "name",
    "description",
    "model_invocable",
    "revision_count",
    "published_revision",
    "latest_revision",
    "awaiting_review",
    "created_at",
    "updated_at",
}
REVISION_FIELDS = {
    "revision_id",
    "skill_id",
    "slug",
    "workspace",
    "revision_number",
    "state",
    "name",
    "description",
    "canonical_hash",
    "parent_revision_id",
    "author",
    "imported_author",
    "message",
    "source",
    "source_ref",
    "created_at",
    "state_changed_at",
    "reviewed_by",
    "imported_reviewer",
    "reviewed_at",
    "review_comment",
}


def test_skill_list_detail_and_filters(env: Env, api_for: ApiFactory) -> None:
    live = publish(env.owner, env.personal, slug="alpha").revision
    save(env.member, env.team, slug="beta", intent="publish")
    save(env.owner, env.team, slug="gamma")
    api = api_for(env.owner)
    listing = api.get("/v1/skills")
    assert listing.status_code == 200
    page = listing.json()
    assert set(page) == {"results", "next_cursor"}
    assert page["next_cursor"] is None
    assert [(s["workspace"], s["slug"]) for s in page["results"]] == sorted(
        [(env.personal.slug, "alpha"), (env.team.slug, "beta"), (env.team.slug, "gamma")]
    )
    alpha = next(s for s in page["results"] if s["slug"] == "alpha")
    assert set(alpha) == SKILL_FIELDS
    assert alpha["published_revision"] == {
        "revision_id": live.revision_id,
        "revision_number": 1,
    }
    assert alpha["latest_revision"] == {
        "revision_id": live.revision_id,
        "revision_number": 1,
        "state": "published",
    }
    assert alpha["scope"] == "personal"
    assert alpha["status"] == "active"
    assert alpha["name"] == "Deploy runbook"
    proposed = api.get("/v1/skills", {"state": "proposed"}).json()["results"]
    assert [s["slug"] for s in proposed] == ["beta"]
    assert proposed[0]["awaiting_review"] == 1
    team_only = api.get("/v1/skills", {"workspace": env.team.slug}).json()["results"]
    assert {s["slug"] for s in team_only} == {"beta", "gamma"}
    detail = api.get(f"/v1/skills/{live.skill.skill_id}")
    assert detail.status_code == 200
    assert detail.json() == alpha
    for bad in ({"state": "nope"}, {"status": "nope"}, {"limit": "0"}, {"cursor": "garbage"}):
        response = api.get("/v1/skills", bad)
        assert response.status_code == 400, bad
        assert error_code(response) == "VALIDATION_ERROR"


def test_cursor_pagination_walks_every_skill_once(env: Env, api_for: ApiFactory) -> None:
    for i in range(7):
        save(env.owner, env.personal, slug=f"s-{i}")
    api = api_for(env.owner)
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params = {"limit": 3, **({"cursor": cursor} if cursor else {})}
        page = api.get("/v1/skills", params).json()
        seen += [s["slug"] for s in page["results"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
        assert str(env.personal.pk) not in cursor or len(cursor) > 20  # opaque
    assert seen == [f"s-{i}" for i in range(7)]
    assert pages == 3
    # A cursor of one list is refused by another.
    first = api.get("/v1/skills", {"limit": 1}).json()["next_cursor"]
    other = api.get("/v1/workspaces", {"cursor": first})
    assert other.status_code == 400


def test_archive_unarchive_delete(env: Env, api_for: ApiFactory) -> None:
    rev = publish(env.member, env.team, slug="old").revision
    skill_id = rev.skill.skill_id
    member = api_for(env.member)
    denied = member.post(f"/v1/skills/{skill_id}/archive")
    assert denied.status_code == 403
    assert error_code(denied) == "PERMISSION_DENIED"
    admin = api_for(env.admin)
    not_yet = admin.delete(f"/v1/skills/{skill_id}")
    assert not_yet.status_code == 409
    assert error_code(not_yet) == "INVALID_TRANSITION"
    archived = admin.post(f"/v1/skills/{skill_id}/archive")
    assert archived.status_code == 200
    assert archived.json()["status"] == "archived"
    assert set(archived.json()) == SKILL_FIELDS
    back = admin.post(f"/v1/skills/{skill_id}/unarchive")
    assert back.json()["status"] == "active"
    admin.post(f"/v1/skills/{skill_id}/archive")
    read_only = api_for(env.admin, scopes=["skills:read"]).delete(f"/v1/skills/{skill_id}")
    assert read_only.status_code == 403
    gone = admin.delete(f"/v1/skills/{skill_id}")
    assert gone.status_code == 204
    assert not Skill.objects.filter(skill_id=skill_id).exists()
    assert AuditEntry.objects.filter(action="skills.skill.delete", target_id=skill_id).exists()
    assert admin.get(f"/v1/skills/{skill_id}").status_code == 404
    recall = admin.get("/v1/recall", {"slug": "old", "revision_id": rev.revision_id})
    assert recall.status_code == 404


def test_revision_list_and_detail(env: Env, api_for: ApiFactory) -> None:
    first = save(env.owner, env.personal, instruction_body="v1").revision
    second = save(
        env.owner,
        env.personal,
        instruction_body="v2",
        components=(component("r.md", "ref"),),
    ).revision
    api = api_for(env.owner)
    page = api.get(f"/v1/skills/{first.skill.skill_id}/revisions").json()
    assert [r["revision_number"] for r in page["results"]] == [2, 1]
    assert set(page["results"][0]) == REVISION_FIELDS
    assert page["results"][0]["parent_revision_id"] == first.revision_id
    assert page["results"][0]["author"] == env.owner.username
    assert "instruction_body" not in page["results"][0]
    drafts = api.get(f"/v1/skills/{first.skill.skill_id}/revisions", {"state": "published"})
    assert drafts.json()["results"] == []
    detail = api.get(f"/v1/revisions/{second.revision_id}").json()
    assert set(detail) == REVISION_FIELDS | {
        "frontmatter",
        "instruction_body",
        "components",
        "answers_revision_id",
        "approvals",
    }
    assert detail["instruction_body"] == "v2"
    assert detail["components"] == [
        {
            "logical_path": "r.md",
            "type": "reference",
            "content_hash": second.components.get().content_hash,
            "size": 3,
            "media_type": "text/markdown",
        }
    ]


@pytest.mark.parametrize("comment", ["", "   "])
def test_reject_needs_a_comment(env: Env, api_for: ApiFactory, comment: str) -> None:
    rev = save(env.member, env.team, intent="publish").revision
    response = api_for(env.admin).post(
        f"/v1/revisions/{rev.revision_id}/reject", {"comment": comment}
    )
    assert response.status_code == 400
    assert error_code(response) == "VALIDATION_ERROR"


def test_every_lifecycle_action_over_rest(env: Env, api_for: ApiFactory) -> None:
    rev = save(env.member, env.team).revision
    member, admin = api_for(env.member), api_for(env.admin)
    url = f"/v1/revisions/{rev.revision_id}"
    proposed = member.post(f"{url}/propose")
    assert proposed.status_code == 200
    assert proposed.json()["state"] == "proposed"
    assert member.post(f"{url}/withdraw").json()["state"] == "draft"
    member.post(f"{url}/propose")
    member_approve = member.post(f"{url}/approve")
    assert member_approve.status_code == 403
    assert error_code(member_approve) == "PERMISSION_DENIED"
    rejected = admin.post(f"{url}/reject", {"comment": "Tighten step 2."})
    assert rejected.json()["state"] == "draft"
    assert rejected.json()["review_comment"] == "Tighten step 2."
    assert rejected.json()["reviewed_by"] == env.admin.username
    member.post(f"{url}/propose")
    approved = admin.post(f"{url}/approve")
    assert approved.json()["state"] == "published"
    # Approving a published revision is a second sign-off (SPEC §21), never twice by one person.
    again = admin.post(f"{url}/approve")
    assert again.status_code == 409
    assert error_code(again) == "CONFLICT"
    assert "already approved" in again.json()["error"]["message"]
    no_publish_in_team = admin.post(f"{url}/publish")
    assert error_code(no_publish_in_team) == "INVALID_TRANSITION"
    deprecated = admin.post(f"{url}/deprecate")
    assert deprecated.json()["state"] == "deprecated"
    # Restoring the latest revision itself changes nothing (same content, nothing new).
    same = member.post(f"{url}/restore")
    assert same.status_code == 200
    assert same.json()["revision_id"] == rev.revision_id
    save(env.member, env.team, instruction_body="something else")
    restored = member.post(f"{url}/restore", {"message": "bring it back"})
    assert restored.status_code == 201
    new = restored.json()
    assert new["revision_number"] == 3
    assert new["state"] == "proposed"
    assert new["source"] == "restore"
    assert new["message"] == "bring it back"
    assert new["canonical_hash"] == rev.canonical_hash
    unknown = admin.post(f"{url}/explode")
    assert unknown.status_code == 404
    assert error_code(unknown) == "NOT_FOUND"


def test_personal_publish_and_review_scope(env: Env, api_for: ApiFactory) -> None:
    rev = save(env.owner, env.personal).revision
    writer = api_for(env.owner, scopes=["skills:read", "skills:write"])
    no_review = writer.post(f"/v1/revisions/{rev.revision_id}/publish")
    assert no_review.status_code == 403
    assert no_review.json()["error"]["details"]["required_scope"] == "skills:review"
    published = api_for(env.owner).post(f"/v1/revisions/{rev.revision_id}/publish")
    assert published.status_code == 200
    assert published.json()["state"] == "published"
    assert SkillRevision.objects.get(pk=rev.pk).state == "published"


def test_component_raw_bytes_are_served_safely(env: Env, api_for: ApiFactory) -> None:
    html = "<script>alert(1)</script>"
    rev = save(
        env.owner,
        env.personal,
        components=(
            component("docs/page.html", html, "document"),
            component("refs/guide.md", "# Guide"),
            component("img/x.svg", "<svg onload='alert(1)'/>", "artifact"),
            component("bin/blob.dat", b"\x00\xff\x10", "artifact"),
            component("refs/naïve name.md", "n"),
            component('refs/say "hi" ü.md', "q"),
            component('refs/say "hi".md', "q"),
        ),
    ).revision
    api = api_for(env.owner)
    base = f"/v1/revisions/{rev.revision_id}/components"
    page = api.get(f"{base}/docs/page.html")
    assert page.status_code == 200
    assert page.content == html.encode()
    assert page["Content-Type"].startswith("text/plain")
    assert page["X-Content-Type-Options"] == "nosniff"
    assert page["Content-Security-Policy"].startswith("sandbox")
    assert page["Content-Disposition"].startswith("attachment")
    assert page["ETag"] == f'"{rev.components.get(logical_path="docs/page.html").content_hash}"'
    svg = api.get(f"{base}/img/x.svg")
    assert svg["Content-Type"].startswith("text/plain")
    guide = api.get(f"{base}/refs/guide.md")
    assert guide["Content-Type"] == "text/markdown; charset=utf-8"
    assert guide["Content-Disposition"].startswith("inline")
    blob = api.get(f"{base}/bin/blob.dat")
    assert blob.content == b"\x00\xff\x10"
    assert blob["Content-Type"] == "application/octet-stream"
    unicode_name = api.get(f"{base}/refs/naïve name.md")
    assert unicode_name.status_code == 200
    # RFC 8187: the charset name is case-insensitive (Django writes "utf-8").
    disposition = unicode_name["Content-Disposition"]
    assert re.search(r"filename\*=UTF-8''na%C3%AFve%20name\.md$", disposition, re.IGNORECASE)
    quoted = api.get(f'{base}/refs/say "hi" ü.md')
    assert quoted.status_code == 200
    assert re.search(
        r"^inline; filename\*=UTF-8''say%20%22hi%22%20%C3%BC\.md$",
        quoted["Content-Disposition"],
        re.IGNORECASE,
    )
    ascii_quoted = api.get(f'{base}/refs/say "hi".md')
    assert ascii_quoted["Content-Disposition"] == 'inline; filename="say \\"hi\\".md"'
    cached = api.get(f"{base}/refs/guide.md", **{"If-None-Match": guide["ETag"]})
    assert cached.status_code == 304
    missing = api.get(f"{base}/nope.md")
    assert missing.status_code == 404
    assert error_code(missing) == "NOT_FOUND"


def test_diff_between_two_revisions(env: Env, api_for: ApiFactory) -> None:
    old = publish(
        env.owner,
        env.personal,
        instruction_body="Run the deploy script now.",
        components=(component("a.md", "alpha beta"), component("gone.md", "bye")),
    ).revision
    new = save(
        env.owner,
        env.personal,
        instruction_body="Run the canary deploy script now.",
        components=(component("a.md", "alpha gamma"), component("new.md", "hi")),
    ).revision
    api = api_for(env.owner)
    url = f"/v1/skills/{old.skill.skill_id}/diff"
    response = api.get(url, {"from": old.revision_id, "to": new.revision_id})
    assert response.status_code == 200
    diff = response.json()
    assert diff["skill_id"] == old.skill.skill_id
    assert diff["from"] == {"revision_id": old.revision_id, "revision_number": 1}
    assert diff["to"] == {"revision_id": new.revision_id, "revision_number": 2}
    assert {"op": "insert", "text": "canary "} in diff["instruction_body"]
    assert diff["name"] is None
    assert [c["path"] for c in diff["components"]["added"]] == ["new.md"]
    assert [c["path"] for c in diff["components"]["removed"]] == ["gone.md"]
    [changed] = diff["components"]["changed"]
    assert changed["path"] == "a.md"
    assert {"op": "insert", "text": "gamma"} in changed["diff"]
    assert diff["stats"]["insertions"] >= 2
    # Defaults: to = latest, from = the published revision.
    assert api.get(url).json()["from"]["revision_id"] == old.revision_id
    other = publish(env.owner, env.personal, slug="other").revision
    foreign = api.get(url, {"from": other.revision_id, "to": new.revision_id})
    assert foreign.status_code == 404
    assert error_code(foreign) == "NOT_FOUND"


def test_diff_without_anything_to_compare(env: Env, api_for: ApiFactory) -> None:
    rev = save(env.owner, env.personal).revision
    response = api_for(env.owner).get(f"/v1/skills/{rev.skill.skill_id}/diff")
    assert response.status_code == 400
    assert error_code(response) == "VALIDATION_ERROR"


def test_revision_reads_need_the_read_scope(env: Env, api_for: ApiFactory) -> None:
    rev = save(env.owner, env.personal).revision
    api = api_for(env.owner, scopes=["skills:write"])
    for path in (
        f"/v1/revisions/{rev.revision_id}",
        f"/v1/skills/{rev.skill.skill_id}",
        f"/v1/skills/{rev.skill.skill_id}/revisions",
        "/v1/skills",
    ):
        response = api.get(path)
        assert response.status_code == 403, path
        assert error_code(response) == "PERMISSION_DENIED"
    revision_transition(actor=actor_for(env.owner), revision=rev, action="publish")
