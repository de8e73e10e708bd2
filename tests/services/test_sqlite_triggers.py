"""The immutability triggers on SQLite (the embedded default), checked even when the suite
itself runs on PostgreSQL: a real migrate into a fresh SQLite file, then raw UPDATEs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

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
results = []
for sql, params in [
    ("UPDATE skills_app_skillrevision SET instruction_body='x' WHERE id=%s", [rev.pk]),
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
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(XMEMO_VAR_DIR=str(tmp_path), XMEMO_DEBUG="1")
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v0"], env=env, check=True, cwd=ROOT)
    out = subprocess.run(
        [*manage, "shell", "--no-imports", "-c", SCRIPT],
        env=env,
        check=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    refused = "'refused:IntegrityError'"
    assert out == f"sqlite [{refused}, {refused}, {refused}, 'allowed']", out
