"""Labels (docs/contract.md §18): set, move, delete, recall by label, the team rules, the audit
entries, the webhook event and the ETag of the Level 1 answers they change."""

from __future__ import annotations

from typing import Any

from skills_app.infra.crypto import secret_encrypt
from skills_app.models import AuditEntry, SkillRevision, Webhook, WebhookDelivery
from skills_app.services.skills import revision_transition
from tests.api.conftest import Api, ApiFactory, error_code
from tests.factories import Env, actor_for, publish, save

RECALL = "/v1/recall"


def _labels(skill_id: str) -> str:
    return f"/v1/skills/{skill_id}/labels"


def _put(api: Api, revision: SkillRevision, name: str) -> Any:
    return api.put(
        f"{_labels(revision.skill.skill_id)}/{name}", {"revision_id": revision.revision_id}
    )


def test_set_move_list_and_delete_a_label(env: Env, api_for: ApiFactory) -> None:
    first = publish(env.owner, env.personal, slug="deploy").revision
    second = save(env.owner, env.personal, slug="deploy", instruction_body="# Two\n").revision
    api = api_for(env.owner)
    skill_id = first.skill.skill_id

    set_ = _put(api, first, "production")
    assert set_.status_code == 200, set_.content
    assert set_.json()["name"] == "production"
    assert set_.json()["revision_id"] == first.revision_id
    assert set_.json()["moved_by"] == env.owner.username
    _put(api, second, "staging")
    moved = _put(api, second, "production")
    assert moved.json()["revision_number"] == second.revision_number

    listed = api.get(_labels(skill_id))
    assert listed.status_code == 200
    assert [(row["name"], row["revision_id"]) for row in listed.json()] == [
        ("production", second.revision_id),
        ("staging", second.revision_id),
    ]
    assert set(listed.json()[0]) == {
        "name",
        "revision_id",
        "revision_number",
        "moved_by",
        "moved_at",
    }

    assert api.delete(f"{_labels(skill_id)}/staging").status_code == 204
    assert [row["name"] for row in api.get(_labels(skill_id)).json()] == ["production"]
    gone = api.delete(f"{_labels(skill_id)}/staging")
    assert gone.status_code == 404
    assert error_code(gone) == "LABEL_NOT_FOUND"

    actions = list(
        AuditEntry.objects.filter(action__startswith="skills.label.")
        .order_by("id")
        .values_list("action", "data__label", "data__revision_id")
    )
    assert actions == [
        ("skills.label.move", "production", first.revision_id),
        ("skills.label.move", "staging", second.revision_id),
        ("skills.label.move", "production", second.revision_id),
        ("skills.label.delete", "staging", None),
    ]


def test_recall_by_label_and_every_level1_answer_lists_its_labels(
    env: Env, api_for: ApiFactory
) -> None:
    first = publish(env.owner, env.personal, slug="deploy").revision
    second = save(env.owner, env.personal, slug="deploy", instruction_body="# Two\n").revision
    api = api_for(env.owner)
    _put(api, second, "staging")
    _put(api, first, "production")

    by_label = api.get(RECALL, {"slug": "deploy", "label": "staging"}).json()["data"]
    assert by_label["revision_id"] == second.revision_id
    assert by_label["resolved_by"] == "label"
    assert by_label["labels"] == ["staging"]
    assert by_label["instruction_body"] == "# Two\n"
    published = api.get(RECALL, {"slug": "deploy"}).json()["data"]
    assert (published["revision_id"], published["labels"]) == (first.revision_id, ["production"])
    pinned = api.get(RECALL, {"slug": "deploy", "revision_id": second.revision_id}).json()
    assert pinned["data"]["labels"] == ["staging"]

    unknown = api.get(RECALL, {"slug": "deploy", "label": "canary"})
    assert unknown.status_code == 404
    assert error_code(unknown) == "LABEL_NOT_FOUND"
    assert unknown.json()["error"]["details"]["label"] == "canary"
    malformed = api.get(RECALL, {"slug": "deploy", "label": "Not A Label"})
    assert (malformed.status_code, malformed.json()["error"]["details"]["field"]) == (400, "label")
    both = api.get(RECALL, {"slug": "deploy", "label": "staging", "revision_id": first.revision_id})
    assert both.status_code == 400


def test_a_moved_label_changes_the_etag_of_the_answers_it_concerns(
    env: Env, api_for: ApiFactory
) -> None:
    first = publish(env.owner, env.personal, slug="deploy").revision
    second = save(env.owner, env.personal, slug="deploy", instruction_body="# Two\n").revision
    api = api_for(env.owner)
    before = api.get(RECALL, {"slug": "deploy"})
    tag = before["ETag"]
    assert api.get(RECALL, {"slug": "deploy"}, **{"If-None-Match": tag}).status_code == 304
    _put(api, first, "production")
    after = api.get(RECALL, {"slug": "deploy"}, **{"If-None-Match": tag})
    assert after.status_code == 200
    assert after["ETag"] != tag
    assert after.json()["data"]["labels"] == ["production"]
    # Moving it away changes the answer again: the published revision has no label now.
    _put(api, second, "production")
    again = api.get(RECALL, {"slug": "deploy"}, **{"If-None-Match": after["ETag"]})
    assert again.status_code == 200
    assert again.json()["data"]["labels"] == []
    assert again.json() == before.json()


def test_team_labels_move_only_by_admins_and_owners_with_the_review_scope(
    env: Env, api_for: ApiFactory
) -> None:
    rev = publish(env.member, env.team, slug="deploy").revision
    member = _put(api_for(env.member), rev, "production")
    assert member.status_code == 403
    assert error_code(member) == "PERMISSION_DENIED"
    no_scope = _put(api_for(env.admin, scopes=["skills:read", "skills:write"]), rev, "production")
    assert no_scope.status_code == 403
    assert no_scope.json()["error"]["details"]["required_scope"] == "skills:review"
    outsider = _put(api_for(env.outsider), rev, "production")
    assert outsider.status_code == 404
    admin = _put(api_for(env.admin), rev, "production")
    assert admin.status_code == 200
    # A member reads labels and recalls by them.
    reader = api_for(env.member)
    assert [row["name"] for row in reader.get(_labels(rev.skill.skill_id)).json()] == ["production"]
    assert reader.delete(f"{_labels(rev.skill.skill_id)}/production").status_code == 403
    recalled = reader.get(RECALL, {"slug": f"{env.team.slug}/deploy", "label": "production"})
    assert recalled.json()["data"]["resolved_by"] == "label"


def test_a_label_never_points_at_a_rejected_revision(env: Env, api_for: ApiFactory) -> None:
    publish(env.member, env.team, slug="deploy")
    proposal = save(env.member, env.team, slug="deploy", intent="publish", instruction_body="x")
    rejected = revision_transition(
        actor=actor_for(env.owner), revision=proposal.revision, action="reject", comment="no"
    )
    answer = _put(api_for(env.owner), rejected, "canary")
    assert answer.status_code == 409
    assert error_code(answer) == "INVALID_TRANSITION"
    assert answer.json()["error"]["details"]["rejected"] is True
    # Proposed again, it may carry one (an admin's deliberate pick, e.g. for a canary).
    again = revision_transition(actor=actor_for(env.member), revision=rejected, action="propose")
    assert _put(api_for(env.owner), again, "canary").status_code == 200


def test_rejecting_a_revision_removes_its_labels(env: Env, api_for: ApiFactory) -> None:
    """Issue 37 #6: ``label=beta`` and ``/v1/sync?label=beta`` kept serving a rejected text."""
    published = publish(env.member, env.team, slug="deploy").revision
    proposal = save(env.member, env.team, slug="deploy", intent="publish", instruction_body="x")
    owner = api_for(env.owner)
    assert _put(owner, proposal.revision, "beta").status_code == 200
    revision_transition(
        actor=actor_for(env.owner), revision=proposal.revision, action="reject", comment="no"
    )

    skill_id = proposal.revision.skill.skill_id
    assert owner.get(_labels(skill_id)).json() == []
    recalled = owner.get(RECALL, {"slug": f"{env.team.slug}/deploy", "label": "beta"})
    assert recalled.status_code == 404
    assert error_code(recalled) == "LABEL_NOT_FOUND"
    synced = owner.get("/v1/sync", {"workspace": env.team.slug, "label": "beta"})
    # Without the label, sync serves the published revision (docs/contract.md §17).
    assert [row["revision_id"] for row in synced.json()["skills"]] == [published.revision_id]
    removed = AuditEntry.objects.filter(action="skills.label.delete").get()
    assert (removed.data["label"], removed.data["revision_id"]) == ("beta", None)
    assert removed.data["from_revision_id"] == proposal.revision.revision_id


def test_label_names_are_checked(env: Env, api_for: ApiFactory) -> None:
    rev = publish(env.owner, env.personal, slug="deploy").revision
    api = api_for(env.owner)
    for name in ("published", "latest", "Prod", "9lives", "a" * 33, "a_b"):
        answer = _put(api, rev, name)
        assert answer.status_code == 400, name
        assert error_code(answer) == "VALIDATION_ERROR"
    other = publish(env.owner, env.personal, slug="other").revision
    foreign = api.put(f"{_labels(rev.skill.skill_id)}/prod", {"revision_id": other.revision_id})
    assert foreign.status_code == 404


def test_moves_and_removals_are_sent_as_label_moved(env: Env, api_for: ApiFactory) -> None:
    Webhook.objects.create(
        workspace=env.team,
        url="https://hooks.example/x",
        events=["label.moved"],
        secret_ciphertext=secret_encrypt("whsec_x"),
    )
    rev = publish(env.member, env.team, slug="deploy").revision
    api = api_for(env.owner)
    _put(api, rev, "production")
    api.delete(f"{_labels(rev.skill.skill_id)}/production")
    payloads = [d.payload for d in WebhookDelivery.objects.order_by("id")]
    assert [p["type"] for p in payloads] == ["label.moved", "label.moved"]
    assert payloads[0]["data"]["label"] == "production"
    assert payloads[0]["data"]["revision_id"] == rev.revision_id
    assert payloads[0]["data"]["skill_id"] == rev.skill.skill_id
    assert payloads[1]["data"]["revision_id"] is None
    assert payloads[1]["data"]["from_revision_id"] == rev.revision_id
