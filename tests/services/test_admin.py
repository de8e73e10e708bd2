"""The Django admin shows revisions and components read-only: no path edits content."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.test import Client

from skills_app.models import SkillComponent, SkillRevision
from tests.factories import Env, save


def test_admin_shows_revisions_but_cannot_change_them(env: Env, client: Client) -> None:
    rev = save(env.owner, env.personal).revision
    comp = SkillComponent.objects.get(revision=rev)
    get_user_model().objects.create_superuser("root", "root@example.com", "pw")
    client.login(username="root", password="pw")
    page = client.get(f"/admin/skills_app/skillrevision/{rev.pk}/change/")
    assert page.status_code == 200
    assert rev.name in page.content.decode()
    assert 'name="_save"' not in page.content.decode()
    for url in (
        f"/admin/skills_app/skillrevision/{rev.pk}/change/",
        f"/admin/skills_app/skillcomponent/{comp.pk}/change/",
    ):
        response = client.post(url, {"name": "hacked", "instruction_body": "hacked", "size": 1})
        assert response.status_code == 403
    assert client.get("/admin/skills_app/skillrevision/add/").status_code == 403
    assert (
        client.post(
            f"/admin/skills_app/skillrevision/{rev.pk}/delete/", {"post": "yes"}
        ).status_code
        == 403
    )
    rev.refresh_from_db()
    assert rev.name == "Deploy runbook"
    assert SkillRevision.objects.count() == 1
