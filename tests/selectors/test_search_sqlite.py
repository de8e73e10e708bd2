"""Level 0 on the embedded default (SQLite): the same words, weights and meaning."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import run_on_fresh_sqlite

SCRIPT = """
import json
from skills_app.access import Actor
from skills_app.encoder import embedding
from skills_app.models import RevisionEmbedding, Skill
from skills_app.selectors.recall import recall_search
from skills_app.services.accounts import user_create, token_create
from skills_app.models import Workspace
from tests.factories import publish

user = user_create(username="demo")
ws = Workspace.objects.get(slug="demo")
publish(user, ws, slug="excel-refs", name="Repair Excel formula references",
        description="Fix #REF! errors in workbook cells after rows were rearranged.",
        instruction_body="Trace each damaged cell reference to its source.")
publish(user, ws, slug="zeppelin", name="Zeppelin", description="An airship.")
publish(user, ws, slug="in-body", name="Alpha", description="First.",
        instruction_body="Mentions the zeppelin once.")
publish(user, ws, slug="human", name="Zeppelin for people", description="Not for agents.",
        frontmatter={"invoke": {"model": False}})
model = embedding.encoder()
for skill in Skill.objects.select_related("current_revision"):
    r = skill.current_revision
    RevisionEmbedding.objects.create(
        revision=r, model=embedding.MODEL, model_version=embedding.model_version(),
        dim=embedding.DIM,
        vector=embedding.vector_bytes(model.encode([f"{r.name}\\n{r.description}"])[0]))
token, _ = token_create(actor=Actor(user=user, via="cli"), user=user, name="t",
                        scopes=["skills:read"])
agent = Actor(user=user, token=token, via="api")

def slugs(query):
    return [h["slug"] for h in recall_search(actor=agent, query=query)["data"]["results"]]

print(json.dumps({
    "words": slugs("zeppelin"),
    "meaning": slugs("my spreadsheet totals broke after I moved some columns around"),
}))
"""


def test_embedded_default_ranks_by_words_and_meaning(tmp_path: Path) -> None:
    answer = json.loads(run_on_fresh_sqlite(SCRIPT, tmp_path).splitlines()[-1])
    # The name outranks the body; the people-only skill stays out for a token.
    assert answer["words"][:2] == ["zeppelin", "in-body"]
    assert "human" not in answer["words"]
    assert answer["meaning"][0] == "excel-refs"
