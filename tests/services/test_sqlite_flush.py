"""``manage.py flush`` (and pytest-django's flush between transactional tests) on the embedded
default: the component delete guard lets a component row go only once its revision is gone, and
Django lists the tables to empty in set order (a different order in every process), so a flush
that reached the components first was refused. Checked on a fresh SQLite file whatever database
the suite itself runs on, with the component table deliberately listed first."""

from __future__ import annotations

from pathlib import Path

from tests.support import run_on_fresh_sqlite

SCRIPT = """
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connection
from skills_app.services.accounts import user_create
from skills_app.access import Actor
from skills_app.models import Workspace, SkillComponent, SkillRevision
from skills_app.services.skills import skill_save
from skills_app.domain.bundle import SkillBundle, ComponentData

def fill(name):
    user = user_create(username=name)
    ws = Workspace.objects.get(slug=name)
    return skill_save(actor=Actor(user=user), workspace=ws, slug="s", bundle=SkillBundle(
        name="n", description="d", instruction_body="body",
        components=(ComponentData("a.md", "document", b"bytes"),))).revision

fill("first")
tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
component_first = sorted(tables, key=lambda t: t != SkillComponent._meta.db_table)
connection.ops.execute_sql_flush(connection.ops.sql_flush(no_style(), component_first))
after_ops = (SkillRevision.objects.count(), SkillComponent.objects.count())
fill("second")
call_command("flush", interactive=False, verbosity=0)
after_command = (SkillRevision.objects.count(), SkillComponent.objects.count())
rev = fill("third")
try:
    with connection.cursor() as c:
        c.execute("DELETE FROM skills_app_skillcomponent")
    guard = "allowed"
except Exception as exc:
    guard = "refused:" + type(exc).__name__
print(after_ops, after_command, guard)
"""


def test_a_flush_empties_revisions_and_components_in_any_table_order(tmp_path: Path) -> None:
    out = run_on_fresh_sqlite(SCRIPT, tmp_path)
    # Both flushes leave nothing behind; a plain DELETE of components is still refused.
    assert out == "(0, 0) (0, 0) refused:IntegrityError", out
