"""Components of an existing revision cannot be inserted or deleted by plain SQL (docs/contract.md
§3:
immutability enforced in the database), while saving a revision with its components and
deleting a skill for good keep working — on PostgreSQL here and SQLite in a subprocess."""

from __future__ import annotations

from pathlib import Path

from django.db import IntegrityError, connection, transaction

from skills_app.access import Actor
from skills_app.models import Skill, SkillComponent, SkillRevision
from skills_app.services.skills import skill_delete, skill_set_status
from tests.factories import Env, save
from tests.support import require_service, run_on_fresh_sqlite


def _refused(sql: str, params: list[int]) -> bool:
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql, params)
            # Deferred checks run at commit; make them run now.
            if connection.vendor == "postgresql":
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    except IntegrityError:
        return True
    return False


INSERT_COPY = (
    "INSERT INTO skills_app_skillcomponent"
    " (revision_id, logical_path, type, blob_id, content_hash, size, media_type)"
    " SELECT revision_id, 'smuggled.md', type, blob_id, content_hash, size, media_type"
    " FROM skills_app_skillcomponent WHERE id = %s"
)


def test_postgres_refuses_plain_sql_insert_and_delete_of_components(env: Env) -> None:
    require_service("postgresql", connection.vendor == "postgresql", "DATABASE_URL is not set")
    revision = save(env.owner, env.personal).revision
    component = SkillComponent.objects.get(revision=revision)
    assert _refused(INSERT_COPY, [component.pk])
    assert _refused("DELETE FROM skills_app_skillcomponent WHERE id = %s", [component.pk])
    # Re-opening a revision, or marking it for purge without deleting it, is refused too.
    assert _refused(
        "UPDATE skills_app_skillrevision SET components_lock = 'open' WHERE id = %s",
        [revision.pk],
    )
    assert _refused(
        "UPDATE skills_app_skillrevision SET components_lock = 'purging' WHERE id = %s;"
        " DELETE FROM skills_app_skillcomponent WHERE revision_id = %s",
        [revision.pk, revision.pk],
    )
    assert list(SkillComponent.objects.filter(revision=revision)) == [component]


def test_saving_and_deleting_for_good_still_work(env: Env) -> None:
    first = save(env.owner, env.personal).revision
    second = save(env.owner, env.personal, instruction_body="# Changed\n").revision
    assert SkillComponent.objects.filter(revision=second).count() == 1  # carried over
    actor = Actor(user=env.owner)
    skill = Skill.objects.get(pk=first.skill_id)
    skill_set_status(actor=actor, skill=skill, status="archived")
    skill_delete(actor=actor, skill=skill)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    assert not SkillRevision.objects.filter(pk__in=[first.pk, second.pk]).exists()
    assert not SkillComponent.objects.exists()


SQLITE_SCRIPT = (
    f"INSERT_COPY = {INSERT_COPY!r}\n"
    + """
from django.db import connection, transaction
from skills_app.services.accounts import user_create
from skills_app.access import Actor
from skills_app.models import Workspace, Skill, SkillComponent
from skills_app.services.skills import skill_save, skill_set_status, skill_delete
from skills_app.domain.bundle import SkillBundle, ComponentData
user = user_create(username="sq")
ws = Workspace.objects.get(slug="sq")
rev = skill_save(actor=Actor(user=user), workspace=ws, slug="s", bundle=SkillBundle(
    name="n", description="d", instruction_body="body",
    components=(ComponentData("a.md", "document", b"bytes"),))).revision
comp = SkillComponent.objects.get(revision=rev)
results = []
for sql, params in [
    (INSERT_COPY, [comp.pk]),
    ("DELETE FROM skills_app_skillcomponent WHERE id=%s", [comp.pk]),
    ("UPDATE skills_app_skillrevision SET components_lock='open' WHERE id=%s", [rev.pk]),
]:
    try:
        with transaction.atomic(), connection.cursor() as c:
            c.execute(sql, params)
        results.append("allowed")
    except Exception as exc:
        results.append("refused:" + type(exc).__name__)
skill = Skill.objects.get()
skill_set_status(actor=Actor(user=user), skill=skill, status='archived')
skill_delete(actor=Actor(user=user), skill=skill)
results.append(SkillComponent.objects.count())
print(connection.vendor, results)
"""
)


def test_sqlite_refuses_plain_sql_insert_and_delete_of_components(tmp_path: Path) -> None:
    out = run_on_fresh_sqlite(SQLITE_SCRIPT, tmp_path)
    refused = "'refused:IntegrityError'"
    assert out == f"sqlite [{refused}, {refused}, {refused}, 0]", out
