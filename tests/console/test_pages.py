"""Console pages through Django's test client: each front-door behaviour, one service call."""

from __future__ import annotations

import io
import re
import zipfile
from typing import Any

import pytest
from django.test import Client, RequestFactory
from django.urls import reverse

from skills_app.console.base import CONTENT_SECURITY_POLICY
from skills_app.domain.bundle import ComponentData
from skills_app.formats.backup import backup_write
from skills_app.models import ApiToken, AuditEntry, Job, Membership, Skill, SkillRevision
from skills_app.services.backup import workspace_backup
from skills_app.services.jobs import export_start, import_start
from tests.factories import Env, actor_for, make_team, personal_ws, save
from xmemo.urls import handler404, handler500

pytestmark = pytest.mark.django_db


def url(name: str, *args: str) -> str:
    return reverse(f"console:{name}", args=args)


def editor_post(**overrides: str) -> dict[str, str]:
    data = {
        "slug": "triage",
        "name": "Triage",
        "description": "Triage incoming bugs.",
        "frontmatter": "license: MIT\n",
        "instruction_body": "# Triage\r\n\r\nLabel every bug.\r\n",
        "message": "first",
        "intent": "draft",
        "c-0-path": "references/labels.md",
        "c-0-type": "reference",
        "c-0-text": "bug, feature\r\n",
    }
    data.update(overrides)
    return data


# --- sign in, layout, headers -------------------------------------------------------------


def test_anonymous_is_sent_to_login(client: Client, env: Env) -> None:
    response = client.get(url("skill_list", env.team.slug))
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


def test_login_lands_in_the_personal_workspace(client: Client, env: Env) -> None:
    env.owner.set_password("pw")
    env.owner.save()
    assert client.get("/login/").status_code == 200
    response = client.post("/login/", {"username": env.owner.username, "password": "pw"})
    assert response.status_code == 302
    home = client.get("/")
    assert home["Location"] == url("skill_list", env.personal.slug)


def test_logout_is_post_only(owner_client: Client) -> None:
    assert owner_client.get("/logout/").status_code == 405
    assert owner_client.post("/logout/").status_code == 302
    assert owner_client.get("/").status_code == 302


def test_pages_carry_a_strict_csp_and_the_preview_mark(owner_client: Client, env: Env) -> None:
    response = owner_client.get(url("skill_list", env.team.slug))
    csp = response["Content-Security-Policy"]
    assert csp == CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp
    html = response.content.decode()
    assert "Preview" in html
    assert "<script>" not in html
    assert not re.search(r"<[^>]+\son[a-z]+=", html), "inline event handlers are forbidden"
    assert '"allowEval": false' in html


def test_switcher_lists_personal_and_teams(owner_client: Client, env: Env) -> None:
    html = owner_client.get(url("skill_list", env.personal.slug)).content.decode()
    assert url("skill_list", env.personal.slug) in html
    assert url("skill_list", env.team.slug) in html
    assert html.index(env.personal.name) < html.index(env.team.name)


def test_feature_disabled_explains_how_to_switch_it_on(owner_client: Client, env: Env) -> None:
    env.team.cloud_skills_enabled = False
    env.team.save()
    response = owner_client.get(url("skill_list", env.team.slug))
    assert response.status_code == 403
    assert b"Django admin" in response.content
    assert b"Cloud skills enabled" in response.content
    assert owner_client.get(url("members", env.team.slug)).status_code == 200


def test_error_pages_use_the_console_look_and_api_keeps_json(env: Env) -> None:
    factory = RequestFactory()
    page = handler404(factory.get("/w/nope/skills/"))
    assert page.status_code == 404
    assert b'class="topbar"' in page.content
    api = handler404(factory.get("/v1/nope"))
    assert api.status_code == 404
    assert api["Content-Type"].startswith("application/json")
    assert b'"NOT_FOUND"' in api.content
    broken = handler500(factory.get("/w/x/"))
    assert broken.status_code == 500
    assert b"Something broke" in broken.content


# --- skills list ----------------------------------------------------------------------------


def test_list_shows_published_and_latest_and_filters(owner_client: Client, env: Env) -> None:
    save(env.owner, env.personal, slug="alpha", intent="publish")
    save(env.owner, env.personal, slug="alpha", intent="draft", instruction_body="v2 body")
    save(
        env.owner, env.personal, slug="beta", intent="draft", name="Beta", instruction_body="zebra"
    )
    html = owner_client.get(url("skill_list", env.personal.slug)).content.decode()
    assert "alpha" in html
    assert "beta" in html
    drafts_only = owner_client.get(url("skill_list", env.personal.slug), {"state": "published"})
    assert b"alpha" in drafts_only.content
    assert b"beta" not in drafts_only.content
    found = owner_client.get(url("skill_list", env.personal.slug), {"q": "zebra"})
    assert b"beta" in found.content
    assert b">alpha<" not in found.content
    none = owner_client.get(url("skill_list", env.personal.slug), {"q": "nothingmatches"})
    assert b"No skills match" in none.content


def test_empty_workspace_has_an_empty_state(owner_client: Client, env: Env) -> None:
    html = owner_client.get(url("skill_list", env.team.slug)).content.decode()
    assert "No skills yet" in html
    assert url("skill_new", env.team.slug) in html


def test_archived_skills_are_filtered(owner_client: Client, env: Env) -> None:
    skill = save(env.owner, env.personal, slug="old").revision.skill
    owner_client.post(
        url("skill_status", env.personal.slug, skill.skill_id), {"status": "archived"}
    )
    assert Skill.objects.get(pk=skill.pk).status == "archived"
    active = owner_client.get(url("skill_list", env.personal.slug))
    assert b"No skills yet" in active.content or b">old<" not in active.content
    archived = owner_client.get(url("skill_list", env.personal.slug), {"status": "archived"})
    assert b"old" in archived.content


# --- editor ---------------------------------------------------------------------------------


def test_new_skill_with_component_is_saved_as_draft(owner_client: Client, env: Env) -> None:
    response = owner_client.post(url("skill_new", env.team.slug), editor_post())
    skill = Skill.objects.get(workspace=env.team, slug="triage")
    assert response["Location"] == url("skill_detail", env.team.slug, skill.skill_id)
    revision = skill.latest_revision
    assert revision.state == "draft"
    assert revision.source == "console"
    assert revision.instruction_body == "# Triage\n\nLabel every bug.\n"  # CRLF from the textarea
    assert revision.frontmatter == {"license": "MIT"}
    component = revision.components.get()
    assert (component.logical_path, component.type) == ("references/labels.md", "reference")
    assert bytes(component.blob.data) == b"bug, feature\n"


def test_publish_in_a_team_proposes_and_the_banner_shows(member_client: Client, env: Env) -> None:
    member_client.post(url("skill_new", env.team.slug), editor_post(intent="publish"))
    skill = Skill.objects.get(workspace=env.team, slug="triage")
    assert skill.latest_revision.state == "proposed"
    for page in ("skill_detail", "skill_edit", "skill_diff"):
        html = member_client.get(url(page, env.team.slug, skill.skill_id)).content.decode()
        assert 'data-testid="review-banner"' in html, page
        assert url("review", env.team.slug, skill.latest_revision.revision_id) in html


def test_editor_limits_are_shown_and_enforced(owner_client: Client, env: Env) -> None:
    page = owner_client.get(url("skill_new", env.personal.slug)).content.decode()
    assert 'data-limit-bytes="65536"' in page
    assert "65536 bytes left of 64 KiB" in page
    assert "50 components left of 50" in page
    response = owner_client.post(
        url("skill_new", env.personal.slug), editor_post(instruction_body="x" * 65_537)
    )
    assert response.status_code == 413
    assert b"65,537 bytes" in response.content
    assert b"65,536" in response.content
    assert not Skill.objects.filter(slug="triage").exists()


def test_editor_reports_bad_frontmatter_on_its_field(owner_client: Client, env: Env) -> None:
    response = owner_client.post(
        url("skill_new", env.personal.slug), editor_post(frontmatter="license: [unclosed\n")
    )
    assert response.status_code == 400
    assert b"malformed at line" in response.content
    assert not Skill.objects.filter(slug="triage").exists()


def test_editing_and_saving_unchanged_makes_no_revision(owner_client: Client, env: Env) -> None:
    result = save(
        env.owner,
        env.personal,
        slug="crlf",
        instruction_body="line one\r\nline two\r\n",
        components=(
            ComponentData("a/text.md", "document", b"one\r\ntwo\r\n", "text/markdown"),
            ComponentData("b/bin.dat", "artifact", b"\x00\x01\xff", "application/octet-stream"),
        ),
    )
    skill = result.revision.skill
    page = owner_client.get(url("skill_edit", env.personal.slug, skill.skill_id)).content.decode()
    assert "Binary file" in page
    keep = re.findall(r'name="c-(\d+)-keep" value="([0-9a-f]*)"', page)
    assert len(keep) == 2
    post = {
        "name": "Deploy runbook",
        "description": "How to deploy safely.",
        "frontmatter": "license: MIT\n",
        "instruction_body": "line one\r\nline two\r\n",
        "base_revision_id": result.revision.revision_id,
        "intent": "draft",
        "c-0-path": "a/text.md",
        "c-0-type": "document",
        "c-0-keep": keep[0][1],
        "c-0-text": "one\r\ntwo\r\n",
        "c-1-path": "b/bin.dat",
        "c-1-type": "artifact",
        "c-1-keep": keep[1][1],
    }
    response = owner_client.post(url("skill_edit", env.personal.slug, skill.skill_id), post)
    assert response.status_code == 302
    assert SkillRevision.objects.filter(skill=skill).count() == 1
    # Rename the binary, drop the text one: a new revision that reuses the stored bytes.
    post.update({"c-1-path": "assets/bin.dat", "c-0-remove": "on"})
    owner_client.post(url("skill_edit", env.personal.slug, skill.skill_id), post)
    latest = Skill.objects.get(pk=skill.pk).latest_revision
    assert latest.revision_number == 2
    assert [(c.logical_path, bytes(c.blob.data)) for c in latest.components.all()] == [
        ("assets/bin.dat", b"\x00\x01\xff")
    ]


def test_conflict_shows_the_diff_and_rebases(owner_client: Client, env: Env) -> None:
    first = save(env.owner, env.personal, slug="race").revision
    theirs = save(env.owner, env.personal, slug="race", instruction_body="their words\n").revision
    response = owner_client.post(
        url("skill_edit", env.personal.slug, first.skill.skill_id),
        editor_post(
            base_revision_id=first.revision_id,
            instruction_body="my words\n",
            name="Deploy runbook",
        ),
    )
    assert response.status_code == 409
    html = response.content.decode()
    assert 'data-testid="conflict"' in html
    assert "Someone else saved first" in html
    assert f'name="base_revision_id" value="{theirs.revision_id}"' in html
    # Both rewrote the body (issue 37 #9): both sides are shown and kept in the editor.
    overlap = html[html.index('data-testid="overlap"') :]
    assert "Instructions, line 1" in overlap
    assert ("my words" in overlap, "their words" in overlap) == (True, True)
    body = _form_fields(html)["instruction_body"]
    assert [text in body for text in ("my words", "their words", "<<<<<<< your")] == [True] * 3
    assert SkillRevision.objects.filter(skill=first.skill).count() == 2


def test_preview_is_sanitized(owner_client: Client, env: Env) -> None:
    response = owner_client.post(
        url("preview", env.personal.slug),
        {
            "instruction_body": "**hi** <script>alert(1)</script> [x](javascript:alert(1)) $1",
            "arguments": "prod",
            "frontmatter": "",
        },
    )
    html = response.content.decode()
    assert "<strong>hi</strong>" in html
    assert "<script>" not in html
    assert "javascript:" not in html.split("[x]")[0]
    assert 'href="javascript' not in html
    assert "prod" in html  # $1 rendered with the arguments
    assert owner_client.get(url("preview", env.personal.slug)).status_code == 405


# --- review ---------------------------------------------------------------------------------


def test_review_queue_and_page(owner_client: Client, env: Env, proposal: SkillRevision) -> None:
    queue = owner_client.get(url("review_queue", env.team.slug)).content.decode()
    assert url("review", env.team.slug, proposal.revision_id) in queue
    page = owner_client.get(url("review", env.team.slug, proposal.revision_id)).content.decode()
    assert "Changes against what is published (#1)" in page
    assert "<ins>" in page
    assert 'data-testid="approve"' in page
    assert 'data-testid="reject"' in page


def test_members_do_not_get_review_buttons(
    member_client: Client, env: Env, proposal: SkillRevision
) -> None:
    page = member_client.get(url("review", env.team.slug, proposal.revision_id)).content.decode()
    assert 'data-testid="approve"' not in page
    response = member_client.post(
        url("revision_action", env.team.slug, proposal.revision_id, "approve")
    )
    assert response.status_code == 302
    assert SkillRevision.objects.get(pk=proposal.pk).state == "proposed"
    follow = member_client.get(response["Location"]).content.decode()
    assert "Only" in follow
    assert "may approve" in follow


def test_reject_needs_a_comment_then_approve(
    owner_client: Client, env: Env, proposal: SkillRevision
) -> None:
    reject = url("revision_action", env.team.slug, proposal.revision_id, "reject")
    response = owner_client.post(reject, {"comment": "  "}, follow=True)
    assert b"A rejection needs a comment" in response.content
    assert SkillRevision.objects.get(pk=proposal.pk).state == "proposed"
    owner_client.post(reject, {"comment": "Say which pools."})
    rejected = SkillRevision.objects.get(pk=proposal.pk)
    assert (rejected.state, rejected.review_comment) == ("draft", "Say which pools.")
    owner_client.post(url("revision_action", env.team.slug, proposal.revision_id, "propose"))
    owner_client.post(url("revision_action", env.team.slug, proposal.revision_id, "approve"))
    assert SkillRevision.objects.get(pk=proposal.pk).state == "published"
    assert AuditEntry.objects.filter(action="skills.revision.approve", via="console").exists()


def test_unknown_action_is_404(owner_client: Client, env: Env, proposal: SkillRevision) -> None:
    assert (
        owner_client.post(
            url("revision_action", env.team.slug, proposal.revision_id, "explode")
        ).status_code
        == 404
    )


def test_deprecate_and_restore(owner_client: Client, env: Env) -> None:
    first = save(env.owner, env.personal, slug="roll", intent="publish").revision
    save(env.owner, env.personal, slug="roll", intent="publish", instruction_body="new")
    owner_client.post(url("revision_action", env.personal.slug, first.revision_id, "restore"))
    latest = Skill.objects.get(pk=first.skill.pk).latest_revision
    assert (latest.revision_number, latest.state, latest.source) == (3, "published", "restore")
    owner_client.post(url("revision_action", env.personal.slug, latest.revision_id, "deprecate"))
    assert SkillRevision.objects.get(pk=latest.pk).state == "deprecated"


# --- skill page, components, diff -------------------------------------------------------------


def test_skill_page_shows_timeline_components_and_attribution(
    owner_client: Client, env: Env
) -> None:
    result = save(
        env.owner,
        env.personal,
        slug="doc",
        intent="publish",
        message="Initial",
        components=(
            ComponentData("templates/t.md", "template", b"template bytes", "text/markdown"),
            ComponentData('say "hi" ü.md', "reference", b"q", "text/markdown"),
        ),
    )
    skill = result.revision.skill
    html = owner_client.get(url("skill_detail", env.personal.slug, skill.skill_id)).content.decode()
    assert "<h1>Deploy</h1>" in html
    assert "Initial" in html
    assert "source: api" in html
    assert (
        url("component_view", env.personal.slug, result.revision.revision_id, "templates/t.md")
        in html
    )
    text = owner_client.get(
        url("component_view", env.personal.slug, result.revision.revision_id, "templates/t.md")
    )
    assert b"template bytes" in text.content
    download = owner_client.get(
        url("component_download", env.personal.slug, result.revision.revision_id, "templates/t.md")
    )
    assert download["Content-Type"] == "application/octet-stream"
    assert download["Content-Disposition"] == 'attachment; filename="t.md"'
    assert download.content == b"template bytes"
    quoted = owner_client.get(
        url("component_download", env.personal.slug, result.revision.revision_id, 'say "hi" ü.md')
    )
    assert quoted["Content-Disposition"] == (
        "attachment; filename*=utf-8''say%20%22hi%22%20%C3%BC.md"
    )
    missing = owner_client.get(
        url("component_view", env.personal.slug, result.revision.revision_id, "nope.md")
    )
    assert missing.status_code == 404


def test_diff_inline_and_side_by_side(owner_client: Client, env: Env) -> None:
    one = save(env.owner, env.personal, slug="d", instruction_body="alpha beta\n").revision
    two = save(
        env.owner,
        env.personal,
        slug="d",
        instruction_body="alpha gamma\n",
        components=(
            ComponentData("templates/t.md", "template", b"changed", "text/markdown"),
            ComponentData("new.md", "document", b"hello", "text/markdown"),
        ),
    ).revision
    base = url("skill_diff", env.personal.slug, one.skill.skill_id)
    inline = owner_client.get(
        base, {"from": one.revision_id, "to": two.revision_id}
    ).content.decode()
    assert "<del>beta</del>" in inline
    assert "<ins>gamma</ins>" in inline
    # Numbered lines (issue 37 #14): the line as it was (old number only), then as it is.
    assert '<tr class="line-delete"><td class="ln">1</td><td class="ln"></td>' in inline
    assert '<tr class="line-insert"><td class="ln"></td><td class="ln">1</td>' in inline
    assert "new.md" in inline
    assert "changed" in inline
    side = owner_client.get(base, {"from": one.revision_id, "to": two.revision_id, "mode": "side"})
    assert b'class="diff-lines side"' in side.content
    assert owner_client.get(base, {"from": "rev_nope"}).status_code == 404


# --- import / export ------------------------------------------------------------------------


def _skill_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(
            "zipped/SKILL.md",
            "---\nname: Zipped skill\ndescription: Came in a ZIP.\n---\n# Zipped\n",
        )
        archive.writestr("zipped/references/extra.md", "extra notes\n")
    return buffer.getvalue()


def test_import_zip_runs_to_completion(
    owner_client: Client, env: Env, django_capture_on_commit_callbacks: Any
) -> None:
    upload = io.BytesIO(_skill_zip())
    upload.name = "zipped.zip"
    with django_capture_on_commit_callbacks(execute=True):
        response = owner_client.post(
            url("import", env.personal.slug), {"file": upload, "intent": "draft"}
        )
    job = Job.objects.get(kind="import")
    assert response["Location"] == url("job_detail", env.personal.slug, job.job_id)
    page = owner_client.get(response["Location"]).content.decode()
    assert 'data-state="succeeded"' in page
    assert "hx-trigger" not in page.split('id="job-progress"')[1].split(">")[0]
    skill = Skill.objects.get(workspace=env.personal, slug="zipped")
    assert url("skill_detail", env.personal.slug, skill.skill_id) in page
    assert skill.latest_revision.source == "import-zip"


def test_import_errors_are_readable(
    owner_client: Client, env: Env, django_capture_on_commit_callbacks: Any
) -> None:
    upload = io.BytesIO(b"not a zip, not markdown")
    upload.name = "junk.bin"
    # Refused at the request (docs/contract.md §16b): no job holds the junk.
    refused = owner_client.post(
        url("import", env.personal.slug), {"file": upload, "intent": "draft"}
    )
    assert refused.status_code == 415
    assert "is not a SKILL.md, a ZIP or a skill.json" in refused.content.decode()
    assert not Job.objects.exists()
    bad = io.BytesIO(b"---\nname: [unclosed\n---\nbody\n")
    bad.name = "SKILL.md"
    with django_capture_on_commit_callbacks(execute=True):
        response = owner_client.post(
            url("import", env.personal.slug), {"file": bad, "intent": "draft"}
        )
    page = owner_client.get(response["Location"]).content.decode()
    assert 'data-state="failed"' in page
    assert "VALIDATION_ERROR" in page
    assert "Nothing was stored" in page
    neither = owner_client.post(url("import", env.personal.slug), {"intent": "draft"})
    assert neither.status_code == 400
    assert b"one of them" in neither.content


def test_export_skill_and_download(
    owner_client: Client, env: Env, django_capture_on_commit_callbacks: Any
) -> None:
    skill = save(env.owner, env.personal, slug="exp", intent="publish").revision.skill
    with django_capture_on_commit_callbacks(execute=True):
        response = owner_client.post(
            url("export", env.personal.slug), {"target": "skill", "skill_id": skill.skill_id}
        )
    job = Job.objects.get(kind="export")
    progress = owner_client.get(url("job_progress", env.personal.slug, job.job_id)).content.decode()
    assert 'data-state="succeeded"' in progress
    assert 'value="1"' in progress
    download = owner_client.get(url("job_download", env.personal.slug, job.job_id))
    assert download["Content-Type"] == "application/zip"
    assert zipfile.ZipFile(io.BytesIO(download.content)).namelist()
    assert response["Location"] == url("job_detail", env.personal.slug, job.job_id)


def test_job_download_answers_like_the_api(owner_client: Client, env: Env) -> None:
    """An export that has not finished is a 409 (poll until it succeeds), a job that is not an
    export a 404 — the API's answers, from the same selector."""
    revision = save(env.owner, env.personal, slug="exp").revision
    export = export_start(actor=actor_for(env.owner), revision=revision)  # queued, not run
    pending = owner_client.get(url("job_download", env.personal.slug, export.job_id))
    assert pending.status_code == 409
    assert b"poll the job until it has succeeded" in pending.content
    not_export = import_start(
        actor=actor_for(env.owner), workspace=env.personal, data=b"---\n", filename="a.md"
    )
    assert (
        owner_client.get(url("job_download", env.personal.slug, not_export.job_id)).status_code
        == 404
    )


def test_export_needs_a_target(owner_client: Client, env: Env) -> None:
    response = owner_client.post(url("export", env.personal.slug), {"target": "revision"})
    assert response.status_code == 400
    assert b"Give the id of the revision" in response.content
    response = owner_client.post(
        url("export", env.personal.slug), {"target": "revision", "revision_id": "rev_nope"}
    )
    assert response.status_code == 400
    assert not Job.objects.exists()


# --- administration -------------------------------------------------------------------------


def test_members_add_change_remove(owner_client: Client, env: Env) -> None:
    members = url("members", env.team.slug)
    response = owner_client.post(members, {"username": env.outsider.username, "role": "member"})
    assert response.status_code == 302
    assert Membership.objects.get(workspace=env.team, user=env.outsider).role == "member"
    owner_client.post(url("member_change", env.team.slug, env.outsider.username), {"role": "admin"})
    assert Membership.objects.get(workspace=env.team, user=env.outsider).role == "admin"
    owner_client.post(url("member_change", env.team.slug, env.outsider.username), {"remove": "1"})
    assert not Membership.objects.filter(workspace=env.team, user=env.outsider).exists()
    unknown = owner_client.post(members, {"username": "ghost", "role": "member"})
    assert unknown.status_code == 404
    assert b"ghost" in unknown.content


def test_members_cannot_manage_members(member_client: Client, env: Env) -> None:
    page = member_client.get(url("members", env.team.slug)).content.decode()
    assert "Add a member" not in page
    member_client.post(url("member_change", env.team.slug, env.member2.username), {"remove": "1"})
    assert Membership.objects.filter(workspace=env.team, user=env.member2).exists()


def test_tokens_shown_once_then_revoked(owner_client: Client, env: Env) -> None:
    tokens = url("tokens", env.team.slug)
    response = owner_client.post(
        tokens,
        {"name": "ci", "scopes": ["skills:read"], "restrict": "on", "profile": "ordinary-full"},
    )
    assert response.status_code == 201
    assert response["Cache-Control"] == "no-store"
    secret = re.search(r"xm_[A-Za-z0-9_-]+", response.content.decode()).group(0)
    token = ApiToken.objects.get(name="ci")
    assert token.workspace == env.team
    assert token.scopes == ["skills:read"]
    listing = owner_client.get(tokens).content.decode()
    assert secret not in listing
    assert token.prefix in listing
    owner_client.post(url("token_revoke", env.team.slug, token.token_id))
    assert ApiToken.objects.get(pk=token.pk).revoked_at is not None
    bad = owner_client.post(tokens, {"name": "x", "scopes": [], "profile": "ordinary-full"})
    assert bad.status_code == 400
    assert b"scopes must be" in bad.content


def test_audit_log_filters_and_is_for_admins(
    owner_client: Client, member_client: Client, env: Env
) -> None:
    save(env.owner, env.team, slug="audited")
    audit = url("audit", env.team.slug)
    page = owner_client.get(audit, {"action": "skills.revision"}).content.decode()
    assert "skills.revision.create" in page
    assert (
        "skills.revision.create"
        not in owner_client.get(audit, {"action": "token"}).content.decode()
    )
    assert member_client.get(audit).status_code == 403


def test_archive_then_delete(owner_client: Client, env: Env) -> None:
    skill = save(env.owner, env.personal, slug="gone").revision.skill
    delete = url("skill_delete", env.personal.slug, skill.skill_id)
    refused = owner_client.post(delete, {"confirm_slug": "gone"})
    assert b"Archive the skill before deleting" in refused.content
    owner_client.post(
        url("skill_status", env.personal.slug, skill.skill_id), {"status": "archived"}
    )
    assert b"Type" in owner_client.post(delete, {"confirm_slug": "nope"}).content
    response = owner_client.post(delete, {"confirm_slug": "gone"})
    assert response["Location"] == url("skill_list", env.personal.slug)
    assert not Skill.objects.filter(pk=skill.pk).exists()
    assert AuditEntry.objects.filter(action="skills.skill.delete").exists()


def test_create_team(owner_client: Client, env: Env) -> None:
    response = owner_client.post("/w/new/", {"slug": "new-team", "name": "New team"})
    assert response["Location"] == url("skill_list", "new-team")
    taken = owner_client.post("/w/new/", {"slug": "new-team", "name": "Again"})
    assert b"is taken" in taken.content
    assert personal_ws(env.owner).slug == env.owner.username


def test_restore_a_backup_from_the_import_page(
    owner_client: Client, env: Env, django_capture_on_commit_callbacks: Any
) -> None:
    save(env.owner, env.team, slug="kept")
    data = backup_write(workspace_backup(workspace=env.team))
    empty = make_team(env.owner, slug="empty-team")
    assert b'data-testid="restore-form"' in owner_client.get(url("import", empty.slug)).content

    def post(ws: str) -> Any:
        upload = io.BytesIO(data)
        upload.name = "team-backup.zip"
        with django_capture_on_commit_callbacks(execute=True):
            return owner_client.post(url("restore", ws), {"backup": upload})

    refused = post(env.team.slug)
    assert refused.status_code == 409
    assert b"already holds skills" in refused.content
    response = post(empty.slug)
    page = owner_client.get(response["Location"]).content.decode()
    assert 'data-state="succeeded"' in page
    skill = Skill.objects.get(workspace=empty, slug="kept")
    assert url("skill_detail", empty.slug, skill.skill_id) in page


def test_new_skill_with_a_taken_slug_links_to_it_and_saves_nothing(
    owner_client: Client, env: Env
) -> None:
    """Issue 25 #15: "New skill" with an existing slug made a published revision of that skill
    (new name and body, every component dropped). Now it is a form error naming the skill."""
    existing = save(env.owner, env.personal, slug="triage", intent="publish").revision
    response = owner_client.post(
        url("skill_new", env.personal.slug), editor_post(name="Other", intent="publish")
    )
    assert response.status_code == 409
    html = response.content.decode()
    assert "already exists" in html
    assert (
        f'href="{url("skill_detail", env.personal.slug, existing.skill.skill_id)}"'
        ' data-testid="slug-taken"' in html
    )
    assert 'value="Other"' in html  # the author's input is kept
    assert SkillRevision.objects.filter(skill=existing.skill).count() == 1
    assert Skill.objects.get(pk=existing.skill.pk).latest_revision.name == existing.name


def _form_fields(html: str) -> dict[str, str]:
    """The editor form's named inputs, selects and textareas as a browser would post them."""
    from html.parser import HTMLParser

    fields: dict[str, str] = {}

    class Reader(HTMLParser):
        textarea: str | None = None
        select: str | None = None
        in_template = False  # a <template>'s inputs are not part of the form

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            named = dict(attrs)
            name = named.get("name")
            self.in_template = self.in_template or tag == "template"
            if self.in_template:
                return
            if tag == "input" and name and named.get("type") not in ("submit", "checkbox"):
                fields[name] = named.get("value") or ""
            elif tag == "textarea" and name:
                self.textarea = name
                fields[name] = ""
            elif tag == "select" and name:
                self.select = name
            elif (
                tag == "option"
                and self.select
                and (self.select not in fields or "selected" in named)
            ):
                fields[self.select] = named.get("value") or ""

        def handle_endtag(self, tag: str) -> None:
            if tag == "textarea":
                self.textarea = None
            elif tag == "template":
                self.in_template = False
            elif tag == "select":
                self.select = None

        def handle_data(self, data: str) -> None:
            if self.textarea:
                fields[self.textarea] += data

    form = html[html.index('id="editor-form"') :]
    Reader().feed(form[: form.index("</form>")])
    return fields


def test_conflict_editor_holds_plain_values_and_its_save_succeeds(
    owner_client: Client, env: Env
) -> None:
    """Issue 25 #16: the rebased editor held Python list reprs (``['Release notes writer']``),
    so saving it failed validation."""
    first = save(env.owner, env.personal, slug="race").revision
    save(env.owner, env.personal, slug="race", frontmatter={"license": "MIT", "owner": "ops"})
    edit = url("skill_edit", env.personal.slug, first.skill.skill_id)
    conflict = owner_client.post(
        edit,
        editor_post(
            base_revision_id=first.revision_id,
            name="Release notes writer",
            instruction_body="my words\n",
        ),
    )
    assert conflict.status_code == 409
    fields = _form_fields(conflict.content.decode())
    assert fields["name"] == "Release notes writer"
    assert fields["description"].strip() == "Triage incoming bugs."
    assert fields["frontmatter"].strip() == "license: MIT\nowner: ops"  # theirs, merged in
    assert fields["instruction_body"].strip() == "my words"
    assert fields["message"] == "first"
    assert "['" not in "".join(fields.values())
    fields["intent"] = "draft"
    saved = owner_client.post(edit, fields)
    assert saved.status_code == 302
    latest = Skill.objects.get(pk=first.skill.pk).latest_revision
    assert (latest.revision_number, latest.name) == (3, "Release notes writer")
    assert latest.instruction_body.strip() == "my words"
    assert latest.description == "Triage incoming bugs."
    assert [(c.logical_path, c.type) for c in latest.components.all()] == [
        ("references/labels.md", "reference")
    ]


def test_tokens_page_says_what_each_profile_exposes(owner_client: Client, env: Env) -> None:
    """Issue 25 #18: `claude-code` and `chatgpt-public` were offered as bare names and yield
    no tool; each option now says what it exposes, and the default exposes the tools."""
    page = owner_client.get(url("tokens", env.team.slug)).content.decode()
    options = dict(re.findall(r'<option value="([^"]+)"[^>]*>([^<]+)</option>', page))
    assert options["claude-code"] == "claude-code — no MCP tools; use the REST API / bridge"
    assert options["chatgpt-public"] == "chatgpt-public — no MCP tools; use the REST API / bridge"
    assert options["ordinary-full"] == (
        "ordinary-full — MCP tools: recall_cloud_skill (read), save_cloud_skill (write),"
        " report_skill_outcome (read)"
    )
    assert re.search(r'<option value="ordinary-full"[^>]*selected', page)


def test_the_footer_api_link_opens_the_interactive_docs(owner_client: Client, env: Env) -> None:
    """Issue 25 #21: the footer's "API" opened the raw OpenAPI schema."""
    page = owner_client.get(url("skill_list", env.personal.slug)).content.decode()
    footer = page[page.index('<footer class="footer">') :]
    link = re.search(r'<a href="([^"]+)">API</a>', footer)
    assert link is not None
    assert link.group(1) == "/v1/docs"
    docs = Client().get(link.group(1))
    assert docs.status_code == 200
    assert "swagger-ui" in docs.content.decode().lower()


def test_conflict_merges_their_component_changes_by_path(owner_client: Client, env: Env) -> None:
    """Issue 37 #9, components: what they added, changed or removed since the author's base
    (and the author left alone) is merged in; a text component both changed is merged by
    line; a component the author removed but they changed stays on screen, marked removed."""
    base_components = (
        ComponentData("templates/t.md", "template", b"one\ntwo\n", "text/markdown"),
        ComponentData("references/a.md", "reference", b"alpha\n", "text/markdown"),
        ComponentData("references/gone.md", "reference", b"old\n", "text/markdown"),
    )
    first = save(env.owner, env.personal, slug="race", components=base_components).revision
    save(
        env.owner,
        env.personal,
        slug="race",
        components=(
            ComponentData("templates/t.md", "template", b"one\ntwo, theirs\n", "text/markdown"),
            ComponentData("references/a.md", "reference", b"alpha, theirs\n", "text/markdown"),
            ComponentData("references/new.md", "reference", b"new\n", "text/markdown"),
        ),
    )
    response = owner_client.post(
        url("skill_edit", env.personal.slug, first.skill.skill_id),
        editor_post(
            base_revision_id=first.revision_id,
            instruction_body="# Deploy\n\nStep one.\n",
            **{
                "c-0-path": "templates/t.md",
                "c-0-type": "template",
                "c-0-text": "one, mine\ntwo\n",
                "c-1-path": "references/gone.md",
                "c-1-type": "reference",
                "c-1-text": "old\n",
            },
        ),
    )
    assert response.status_code == 409
    rows = {row.path: row for row in response.context["rows"]}
    assert rows["templates/t.md"].content == b"one, mine\ntwo, theirs\n"
    assert rows["references/new.md"].content == b"new\n"
    assert (rows["references/a.md"].content, rows["references/a.md"].removed) == (
        b"alpha, theirs\n",
        True,  # the author's POST left it out: theirs kept on screen, the removal undoable
    )
    assert rows["references/gone.md"].removed  # they removed it and the author left it alone
    assert response.context["conflict"]["overlaps"] == [
        {"where": "references/a.md", "mine": "(removed)", "theirs": "alpha, theirs\n"}
    ]
