"""Frontmatter key order as authored on SQLite (the embedded default), checked even when the
suite runs on PostgreSQL: a real migrate into a fresh SQLite file, then save → recall (the
selector REST and MCP share) → capsule export → import → recall. (PostgreSQL, through the real
REST and MCP doors: tests/mcp/test_frontmatter_order.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import run_on_fresh_sqlite

FRONTMATTER = {
    "zeta-long-key": "first as written",
    "alpha": 1,
    "license": "MIT",
    "allowed-tools": ["Read"],
    "metadata": {"zz-nested": True, "aa-nested": {"y": 1, "b": 2}},
}

SCRIPT = """
import json, os
from skills_app.formats import capsule
from skills_app.access import Actor
from skills_app.domain.bundle import SkillBundle
from skills_app.models import SkillRevision, Workspace
from skills_app.selectors.recall import recall
from skills_app.services.accounts import user_create
from skills_app.services.jobs.run import _capsule_revision
from skills_app.services.skills import skill_save
from skills_app.formats.archive import zip_bundles_read

def order(value):
    if isinstance(value, dict):
        return [[k, order(v)] for k, v in value.items()]
    return value

frontmatter = json.loads(os.environ["FRONTMATTER"])
user = user_create(username="sq")
actor = Actor(user=user)
ws = Workspace.objects.get(slug="sq")
bundle = SkillBundle(name="n", description="d", instruction_body="b", frontmatter=frontmatter)
rev = skill_save(actor=actor, workspace=ws, slug="s", bundle=bundle).revision
stored = SkillRevision.objects.get(pk=rev.pk).frontmatter
recalled = recall(actor=actor, slug="sq/s", revision_id=rev.revision_id)["data"]["frontmatter"]
data = capsule.capsule_write(_capsule_revision(SkillRevision.objects.get(pk=rev.pk)))
[imported] = zip_bundles_read(data)
again = skill_save(actor=actor, workspace=ws, slug="t", bundle=imported).revision
print(json.dumps([order(x) for x in (stored, recalled, SkillRevision.objects.get(
    pk=again.pk).frontmatter)] + [again.canonical_hash == rev.canonical_hash]))
"""


def test_sqlite_keeps_frontmatter_key_order(tmp_path: Path) -> None:
    out = run_on_fresh_sqlite(SCRIPT, tmp_path, FRONTMATTER=json.dumps(FRONTMATTER))
    *orders, same_hash = json.loads(out.strip().splitlines()[-1])

    def order(value: object) -> object:
        if isinstance(value, dict):
            return [[k, order(v)] for k, v in value.items()]
        return value

    assert orders == [order(FRONTMATTER)] * 3
    assert same_hash is True
