"""The author's loop in the editor (docs/contract.md §22): the saved revision's trigger checks,
and the unsaved text checked on demand against the served skills, nothing stored."""

from __future__ import annotations

import json

from django.test import Client
from django.urls import reverse

from skills_app.domain.bundle import ComponentData
from skills_app.models import SkillRevision
from skills_app.services.evals import evaluation_compute
from tests.factories import Env, publish

TRIGGERS = json.dumps(
    {"should_trigger": ["restore the postgres database from a dump"], "should_not_trigger": []}
).encode()


def test_the_editor_shows_saved_checks_and_checks_the_unsaved_text(
    env: Env, owner_client: Client
) -> None:
    saved = publish(
        env.owner,
        env.personal,
        slug="db-restore",
        name="Restore a database",
        description="Restore a postgres database from a dump.",
        instruction_body="# Restore\n",
        components=(ComponentData("evals/triggers.json", "document", TRIGGERS, "text/plain"),),
    ).revision
    publish(
        env.owner,
        env.personal,
        slug="db-dump",
        name="Dump a database",
        description="Take a dump of a postgres database before a risky change.",
        instruction_body="# Dump\n",
        components=(),
    )
    evaluation_compute(revision=saved)
    ws = env.personal.slug
    page = owner_client.get(reverse("console:skill_edit", args=[ws, saved.skill.skill_id]))
    text = page.content.decode()
    assert 'data-testid="editor-checks"' in text
    assert "Picked first for <strong>1/1</strong>" in text

    vague = owner_client.post(
        reverse("console:trigger_checks", args=[ws]),
        {
            "base_revision_id": saved.revision_id,
            "name": "Helper",
            "description": "Handy notes for the platform team.",
            "instruction_body": "# Helper\n",
            "frontmatter": "",
        },
    )
    assert vague.status_code == 200
    fragment = vague.content.decode()
    assert "Your unsaved text, checked now" in fragment
    assert "Picked first for <strong>0/1</strong>" in fragment
    assert "was 1/1 (#1)" in fragment
    assert "db-dump" in fragment  # the skill Level 0 picked instead
    assert SkillRevision.objects.filter(skill__slug="db-restore").count() == 1
    assert SkillRevision.objects.get(pk=saved.pk).name == "Restore a database"


def test_the_skill_page_shows_checks_outcomes_and_a_note_as_text(
    env: Env, owner_client: Client
) -> None:
    from skills_app.services.outcomes import outcome_report
    from tests.factories import actor_for, make_token

    saved = publish(
        env.owner,
        env.personal,
        slug="db-restore",
        name="Restore a database",
        description="Restore a postgres database from a dump.",
        instruction_body="# Restore\n",
        components=(ComponentData("evals/triggers.json", "document", TRIGGERS, "text/plain"),),
    ).revision
    evaluation_compute(revision=saved)
    token, _ = make_token(env.owner, name="ci-agent")
    outcome_report(
        actor=actor_for(env.owner, token=token),
        revision_id=saved.revision_id,
        outcome="partial",
        note="<script>alert(1)</script>",
    )
    page = owner_client.get(
        reverse("console:skill_detail", args=[env.personal.slug, saved.skill.skill_id])
    ).content.decode()
    assert 'data-testid="evidence"' in page
    assert "Picked first for <strong>1/1</strong>" in page
    assert "0% success" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert(1)</script>" not in page
    assert 'data-testid="outcomes">0 / 1 / 0<' in page  # the usage table, per revision
