from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, transaction
from django.db.utils import DatabaseError

from skills_app import errors
from skills_app.domain.bundle import ComponentData
from skills_app.models import AuditEntry, Blob, Skill, SkillComponent, SkillRevision
from skills_app.services.skills import (
    revision_transition,
    skill_delete,
    skill_save,
    skill_set_status,
)
from tests.factories import Env, actor_for, bundle, make_token, save


def test_first_save_creates_skill_revision_components_and_audit(env: Env) -> None:
    result = save(env.owner, env.personal, slug="deploy", message="first")
    rev = result.revision
    assert result.created
    assert rev.revision_number == 1
    assert rev.state == "draft"
    assert rev.skill.slug == "deploy"
    assert rev.skill.skill_id.startswith("skill_")
    assert rev.revision_id.startswith("rev_")
    assert rev.author == env.owner
    assert rev.message == "first"
    comp = SkillComponent.objects.get(revision=rev)
    assert (comp.logical_path, comp.type, comp.size) == ("templates/t.md", "template", 14)
    assert bytes(comp.blob.data) == b"template bytes"
    assert (
        AuditEntry.objects.filter(
            action="skills.revision.create", target_id=rev.revision_id
        ).count()
        == 1
    )


def test_identical_content_creates_nothing(env: Env) -> None:
    first = save(env.owner, env.personal)
    again = save(env.owner, env.personal)
    assert not again.created
    assert again.revision.pk == first.revision.pk
    assert SkillRevision.objects.count() == 1


def test_publish_intent_on_identical_content_publishes_the_existing_revision(env: Env) -> None:
    draft = save(env.owner, env.personal).revision
    again = save(env.owner, env.personal, intent="publish")
    assert not again.created
    assert again.revision.pk == draft.pk
    draft.refresh_from_db()
    assert draft.state == "published"


def test_publish_intent_on_identical_team_content_proposes(env: Env) -> None:
    draft = save(env.member, env.team).revision
    save(env.member, env.team, intent="publish")
    draft.refresh_from_db()
    assert draft.state == "proposed"


def test_shared_component_bytes_are_stored_once(env: Env) -> None:
    save(env.owner, env.personal, slug="a")
    save(env.owner, env.personal, slug="b", instruction_body="other")
    assert SkillComponent.objects.count() == 2
    assert Blob.objects.count() == 1


def test_omitted_components_carry_over_from_the_latest(env: Env) -> None:
    save(env.owner, env.personal)
    second = save(env.owner, env.personal, instruction_body="v2", components=None).revision
    paths = list(second.components.values_list("logical_path", flat=True))
    assert paths == ["templates/t.md"]


def test_empty_components_clear_them(env: Env) -> None:
    save(env.owner, env.personal)
    second = save(env.owner, env.personal, components=()).revision
    assert second.revision_number == 2
    assert second.components.count() == 0


def test_stale_base_revision_is_a_conflict_and_stores_nothing(env: Env) -> None:
    first = save(env.owner, env.personal).revision
    save(env.owner, env.personal, instruction_body="v2", base_revision_id=first.revision_id)
    with pytest.raises(errors.Conflict) as excinfo:
        save(env.owner, env.personal, instruction_body="v3", base_revision_id=first.revision_id)
    assert excinfo.value.details["latest_revision_number"] == 2
    assert SkillRevision.objects.count() == 2


def test_revision_numbers_parent_chain_and_pointers(env: Env) -> None:
    r1 = save(env.owner, env.personal, intent="publish").revision
    r2 = save(env.owner, env.personal, instruction_body="v2").revision
    skill = Skill.objects.get(pk=r1.skill_id)
    assert r2.parent_id == r1.pk
    assert skill.latest_revision_id == r2.pk
    assert skill.published_revision_id == r1.pk
    assert skill.current_revision_id == r1.pk
    assert skill.search_body == r1.instruction_body


def test_invoke_model_false_marks_skill_people_only(env: Env) -> None:
    rev = save(env.owner, env.personal, frontmatter={"invoke": {"model": False}}).revision
    assert Skill.objects.get(pk=rev.skill_id).model_invocable is False


LIMIT_CASES = [
    ("body at the limit", {"instruction_body": "a" * 65536}, None),
    ("body one byte over", {"instruction_body": "a" * 65537}, "BODY_TOO_LARGE"),
    ("multibyte body over", {"instruction_body": "é" * 32768 + "a"}, "BODY_TOO_LARGE"),
    (
        "component at the limit",
        {"components": (ComponentData("a.bin", "artifact", b"x" * 131072),)},
        None,
    ),
    (
        "component one byte over",
        {"components": (ComponentData("a.bin", "artifact", b"x" * 131073),)},
        "COMPONENT_TOO_LARGE",
    ),
    (
        "50 components",
        {"components": tuple(ComponentData(f"c{i}.md", "document", b"x") for i in range(50))},
        None,
    ),
    (
        "51 components",
        {"components": tuple(ComponentData(f"c{i}.md", "document", b"x") for i in range(51))},
        "TOO_MANY_COMPONENTS",
    ),
    ("name of 200", {"name": "n" * 200}, None),
    ("name of 201", {"name": "n" * 201}, "VALIDATION_ERROR"),
    ("empty name", {"name": ""}, "VALIDATION_ERROR"),
    ("description of 1024", {"description": "d" * 1024}, None),
    ("description of 1025", {"description": "d" * 1025}, "VALIDATION_ERROR"),
    ("path of 255", {"components": (ComponentData("p" * 255, "document", b"x"),)}, None),
    ("path of 256", {"components": (ComponentData("p" * 256, "document", b"x"),)}, "INVALID_PATH"),
    ("dotdot path", {"components": (ComponentData("a/../b", "document", b"x"),)}, "INVALID_PATH"),
    (
        "root SKILL.md",
        {"components": (ComponentData("SKILL.md", "document", b"x"),)},
        "INVALID_PATH",
    ),
    (
        "case-colliding paths",
        {
            "components": (
                ComponentData("A.md", "document", b"x"),
                ComponentData("a.md", "document", b"y"),
            )
        },
        "INVALID_PATH",
    ),
]


@pytest.mark.parametrize(
    ("label", "overrides", "code"), LIMIT_CASES, ids=[c[0] for c in LIMIT_CASES]
)
def test_limits_at_their_boundaries(
    env: Env, label: str, overrides: dict, code: str | None
) -> None:
    if code is None:
        assert save(env.owner, env.personal, **overrides).created
        return
    with pytest.raises(errors.XmemoError) as excinfo:
        save(env.owner, env.personal, **overrides)
    assert excinfo.value.code == code
    assert not Skill.objects.exists()
    assert not SkillRevision.objects.exists()
    assert not Blob.objects.exists()
    assert not AuditEntry.objects.filter(action="skills.revision.create").exists()


@pytest.mark.parametrize("slug", ["", "-a", "a-", "a--b", "A", "a_b", "x" * 65])
def test_bad_slugs_are_refused(env: Env, slug: str) -> None:
    with pytest.raises(errors.ValidationFailed):
        save(env.owner, env.personal, slug=slug)
    assert not Skill.objects.exists()


def test_archive_then_delete_keeps_a_tombstone(env: Env) -> None:
    rev = save(env.owner, env.team, intent="publish").revision
    skill = rev.skill
    with pytest.raises(errors.InvalidTransition):
        skill_delete(actor=actor_for(env.owner), skill=skill)
    with pytest.raises(errors.PermissionDenied):
        skill_set_status(actor=actor_for(env.member), skill=skill, status="archived")
    skill_set_status(actor=actor_for(env.admin), skill=skill, status="archived")
    skill_delete(actor=actor_for(env.admin), skill=skill)
    assert not Skill.objects.filter(pk=skill.pk).exists()
    assert not SkillRevision.objects.exists()
    assert not Blob.objects.exists()
    tombstone = AuditEntry.objects.get(action="skills.skill.delete")
    assert tombstone.target_id == skill.skill_id
    assert tombstone.data["revisions"][0][0] == rev.revision_id


def test_read_only_token_cannot_save(env: Env) -> None:
    token, _ = make_token(env.owner, scopes=["skills:read"])
    reader = actor_for(env.owner, token=token)
    with pytest.raises(errors.PermissionDenied):
        skill_save(actor=reader, workspace=env.personal, slug="x", bundle=bundle())
    assert not Skill.objects.exists()


def test_token_scope_cannot_exceed_role(env: Env) -> None:
    token, _ = make_token(env.member)  # every scope, but only a member's role
    rev = save(env.owner, env.team, intent="publish").revision
    with pytest.raises(errors.PermissionDenied):
        revision_transition(
            actor=actor_for(env.member, token=token), revision=rev, action="approve"
        )


@pytest.mark.django_db(transaction=True)
def test_raw_sql_update_of_revision_content_is_refused(env: Env) -> None:
    rev = save(env.owner, env.personal).revision
    comp = SkillComponent.objects.get(revision=rev)
    token = make_token(env.owner)[0].pk
    statements = [
        (f"UPDATE skills_app_skillrevision SET author_token_id = {token} WHERE id = %s", rev.pk),
        ("UPDATE skills_app_skillrevision SET instruction_body = 'hacked' WHERE id = %s", rev.pk),
        ("UPDATE skills_app_skillrevision SET name = 'hacked' WHERE id = %s", rev.pk),
        ("UPDATE skills_app_skillrevision SET canonical_hash = 'x' WHERE id = %s", rev.pk),
        ("UPDATE skills_app_skillrevision SET approx_tokens = 1 WHERE id = %s", rev.pk),
        ("""UPDATE skills_app_skillrevision SET frontmatter = '{"x": 1}' WHERE id = %s""", rev.pk),
        ("UPDATE skills_app_skillcomponent SET size = 1 WHERE id = %s", comp.pk),
        ("UPDATE skills_app_blob SET data = %s WHERE id = %s", None),
    ]
    for sql, pk in statements:
        params: list[Any] = [pk] if pk is not None else [b"hacked", comp.blob_id]
        with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, params)
    rev.refresh_from_db()
    assert rev.instruction_body == "# Deploy\n\nStep one.\n"
    assert bytes(Blob.objects.get(pk=comp.blob_id).data) == b"template bytes"
    # State and review fields stay movable.
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE skills_app_skillrevision SET state = 'deprecated' WHERE id = %s", [rev.pk]
        )
    rev.refresh_from_db()
    assert rev.state == "deprecated"


@pytest.mark.django_db(transaction=True)
def test_one_published_revision_is_a_database_constraint(env: Env) -> None:
    r1 = save(env.owner, env.personal, intent="publish").revision
    r2 = save(env.owner, env.personal, instruction_body="v2").revision
    with pytest.raises(DatabaseError), transaction.atomic():
        SkillRevision.objects.filter(pk=r2.pk).update(state="published")
    assert SkillRevision.objects.filter(skill=r1.skill, state="published").count() == 1


def test_expect_new_refuses_an_existing_slug_and_stores_nothing(env: Env) -> None:
    """A "new skill" never lands on an existing one (issue 25 #15): the save says the slug is
    taken and names the skill, instead of making a revision of it."""
    existing = save(env.owner, env.personal, slug="deploy").revision
    with pytest.raises(errors.SlugTaken) as refused:
        skill_save(
            actor=actor_for(env.owner),
            workspace=env.personal,
            slug="deploy",
            bundle=bundle(name="Release notes writer", instruction_body="other\n"),
            intent="publish",
            expect_new=True,
        )
    assert refused.value.status == 409
    assert refused.value.details == {
        "field": "slug",
        "slug": "deploy",
        "skill_id": existing.skill.skill_id,
    }
    assert SkillRevision.objects.filter(skill=existing.skill).count() == 1
    fresh = skill_save(
        actor=actor_for(env.owner),
        workspace=env.personal,
        slug="fresh",
        bundle=bundle(),
        expect_new=True,
    )
    assert (fresh.created, fresh.revision.revision_number) == (True, 1)
