"""The export page's view model from one page selector: the skills the picker offers and the
workspace's recent exports, nothing of another workspace's or another kind's."""

from __future__ import annotations

import pytest

from skills_app.models import Job
from skills_app.selectors.pages.jobs import export_page
from skills_app.services.jobs import export_start, import_start
from tests.factories import Env, actor_for, publish

pytestmark = pytest.mark.django_db


def test_the_export_page_offers_the_team_s_skills_and_its_recent_exports(env: Env) -> None:
    owner = actor_for(env.owner)
    deploy = publish(env.owner, env.team, slug="deploy").revision
    publish(env.owner, env.team, slug="audit")
    publish(env.owner, env.personal, slug="private-notes")
    first = export_start(actor=owner, revision=deploy)
    second = export_start(actor=owner, workspace=env.team)
    export_start(actor=owner, workspace=env.personal)
    import_start(actor=owner, workspace=env.team, data=b"---\nname: x\n---\n", filename="SKILL.md")

    page = export_page(actor=owner, workspace=env.team, recent=10)

    assert [slug for _, slug in page.skill_choices] == ["audit", "deploy"]
    assert [job.job_id for job in page.jobs] == [second.job_id, first.job_id]
    assert {job.kind for job in page.jobs} == {Job.Kind.EXPORT}
    assert [j.job_id for j in export_page(actor=owner, workspace=env.team, recent=1).jobs] == [
        second.job_id
    ]
