"""The immutability triggers on SQLite (the embedded default), checked even when the suite
itself runs on PostgreSQL: a real migrate into a fresh SQLite file, then raw UPDATEs."""

from __future__ import annotations

from pathlib import Path

from tests.support import run_on_fresh_sqlite

SCRIPT = """
import sqlite3
from django.db import connection
from skills_app.services.accounts import user_create
from skills_app.access import Actor
from skills_app.models import Workspace, SkillComponent
from skills_app.services.skills import skill_save
from skills_app.domain.bundle import SkillBundle, ComponentData
user = user_create(username="sq")
ws = Workspace.objects.get(slug="sq")
rev = skill_save(actor=Actor(user=user), workspace=ws, slug="s", bundle=SkillBundle(
    name="n", description="d", instruction_body="body",
    components=(ComponentData("a.md", "document", b"bytes"),))).revision
comp = SkillComponent.objects.get(revision=rev)
from skills_app.services.accounts import token_create
token = token_create(actor=Actor(user=user), user=user, name="t", scopes=["skills:read"])[0]
results = []
for sql, params in [
    ("UPDATE skills_app_skillrevision SET author_token_id=%s WHERE id=%s", [token.pk, rev.pk]),
    ("UPDATE skills_app_skillrevision SET instruction_body='x' WHERE id=%s", [rev.pk]),
    ("UPDATE skills_app_skillrevision SET approx_tokens=1 WHERE id=%s", [rev.pk]),
    ("UPDATE skills_app_skillcomponent SET size=1 WHERE id=%s", [comp.pk]),
    ("UPDATE skills_app_blob SET data=%s WHERE id=%s", [b"x", comp.blob_id]),
    ("UPDATE skills_app_skillrevision SET state='deprecated' WHERE id=%s", [rev.pk]),
]:
    try:
        with connection.cursor() as c:
            c.execute(sql, params)
        results.append("allowed")
    except Exception as exc:
        results.append("refused:" + type(exc).__name__)
print(connection.vendor, results)
"""


def test_sqlite_refuses_raw_updates_of_content(tmp_path: Path) -> None:
    out = run_on_fresh_sqlite(SCRIPT, tmp_path)
    refused = "'refused:IntegrityError'"
    assert out == f"sqlite [{refused}, {refused}, {refused}, {refused}, {refused}, 'allowed']", out
