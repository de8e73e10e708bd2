"""The console in real headless Chromium (Debian's package, no browser download) against a
live server: the review flow end to end, import/export progress, inert hostile Markdown, and
a 360 px wide layout. Screenshots of the main pages go to var/screenshots/, or to the
directory XMEMO_SCREENSHOT_DIR names (`make screenshots` refreshes docs/screenshots/).

Playwright's sync API runs its event loop in a greenlet of the test thread, which Django's
async-safety check mistakes for async code; the module therefore sets
``DJANGO_ALLOW_ASYNC_UNSAFE`` while its browser is open (and only then). The live server
runs in its own thread on the same test database (``live_server`` is transactional).
"""

from __future__ import annotations

import io
import json
import os
import re
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, expect, sync_playwright

from skills_app.models import Job, Skill, SkillRevision, Workspace
from tests.factories import make_team, make_token, make_user
from tests.support import require_service

pytestmark = [pytest.mark.browser, pytest.mark.services]

CHROMIUM = os.environ.get("XMEMO_CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(os.environ.get("XMEMO_SCREENSHOT_DIR") or Path(settings.VAR_DIR) / "screenshots")
PASSWORD = "pw-for-browser-tests"
HOSTILE_BODY = (
    "# Looks harmless\n\n"
    "<script>window.__xss = 1; alert('script')</script>\n\n"
    '<img src="x" onerror="window.__xss = 2; alert(\'onerror\')">\n\n'
    "[click me](javascript:window.__xss=3)\n\n"
    '<a href="javascript:alert(4)">raw link</a> <svg onload="window.__xss = 5"></svg>\n\n'
    "Visible marker text.\n"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    require_service("Chromium", os.path.exists(CHROMIUM), f"no browser at {CHROMIUM}")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_playwright() as playwright:
            launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield launched
            launched.close()


@dataclass
class Session:
    """One signed-in browser context, recording anything a hostile page might trigger."""

    page: Page
    dialogs: list[str] = field(default_factory=list)
    csp_violations: list[str] = field(default_factory=list)

    def xss_flag(self) -> Any:
        return self.page.evaluate("() => window.__xss")


@pytest.fixture
def sign_in(browser: Browser, live_server: Any) -> Iterator[Any]:
    contexts = []

    def open_as(user: User, *, width: int = 1280) -> Session:
        context = browser.new_context(
            base_url=live_server.url, viewport={"width": width, "height": 800}
        )
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        session = Session(page=page)

        def on_dialog(dialog: Any) -> None:
            session.dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", on_dialog)
        page.on(
            "console",
            lambda m: (
                session.csp_violations.append(m.text)
                if "Content Security Policy" in m.text
                else None
            ),
        )
        page.goto("/login/")
        page.fill("input[name=username]", user.username)
        page.fill("input[name=password]", PASSWORD)
        page.click("button.primary")
        expect(page.locator("nav.tabs")).to_be_visible()
        return session

    yield open_as
    for context in contexts:
        context.close()


def _user(name: str) -> User:
    user = make_user(name)
    user.set_password(PASSWORD)
    user.save()
    return user


@pytest.fixture
def team(transactional_db: None) -> dict[str, Any]:
    owner, admin, author = _user("olive"), _user("adam"), _user("ana")
    workspace = make_team(owner, slug="acme", members={admin: "admin", author: "member"})
    return {"ws": workspace, "owner": owner, "admin": admin, "author": author}


def _shot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def _write_skill(page: Page, *, slug: str, body: str, component: tuple[str, str] | None) -> None:
    page.fill("input[name=slug]", slug)
    page.fill("input[name=name]", "Release checklist")
    page.fill("textarea[name=description]", "What to check before a release goes out.")
    page.fill("#id_instruction_body", body)
    if component is not None:
        page.click("[data-testid=add-component]")
        page.fill("input[name='c-0-path']", component[0])
        page.select_option("select[name='c-0-type']", "reference")
        page.fill("textarea[name='c-0-text']", component[1])


def test_author_proposes_admin_rejects_then_approves(
    sign_in: Any, team: dict[str, Any], live_server: Any
) -> None:
    ws = team["ws"].slug
    author = sign_in(team["author"])
    page = author.page
    page.goto(f"/w/{ws}/skills/")
    expect(page.get_by_test_id("empty-state")).to_contain_text("No skills yet")
    page.get_by_test_id("new-skill").click()
    body = "# Release\n\n1. Run the tests.\n2. Tag the build.\n"
    _write_skill(page, slug="release", body=body, component=("references/tags.md", "v1.2.3\n"))
    expect(page.get_by_test_id("preview")).to_contain_text("Tag the build.")
    expect(page.get_by_test_id("body-bytes-left")).to_have_text(
        f"{65536 - len(body.encode()):,} bytes left of 64 KiB"
    )
    expect(page.get_by_test_id("components-left")).to_have_text("49 components left of 50")
    page.evaluate("() => document.querySelector('.editor-grid').scrollIntoView()")
    _shot(page, "editor")
    page.get_by_test_id("save-publish").click()
    expect(page.locator(".flash")).to_contain_text("Revision #1 proposed for review")
    expect(page.get_by_test_id("review-banner")).to_be_visible()
    expect(page.get_by_test_id("components")).to_contain_text("references/tags.md")

    admin = sign_in(team["admin"])
    page = admin.page
    page.goto(f"/w/{ws}/skills/")
    expect(page.get_by_test_id("review-count")).to_have_text("1")
    page.get_by_role("link", name="Release checklist").click()
    expect(page.get_by_test_id("review-banner")).to_contain_text("revision #1 by ana")
    page.locator("nav.tabs").get_by_role("link", name=re.compile("^Review")).click()
    expect(page.get_by_test_id("review-queue")).to_contain_text("Release checklist")
    page.get_by_test_id("review-queue").get_by_role("link").first.click()
    expect(page.get_by_test_id("diff")).to_contain_text("references/tags.md")
    expect(page.locator("[data-testid=diff] ins").first).to_be_visible()
    page.fill("#id_comment", "Also say who signs off the release.")
    page.get_by_test_id("reject").click()
    expect(page.locator(".flash")).to_contain_text("rejected")
    revision = SkillRevision.objects.get(revision_number=1)
    assert revision.state == "draft"
    assert revision.review_comment == "Also say who signs off the release."

    page = author.page
    skill = Skill.objects.get(slug="release")
    page.goto(f"/w/{ws}/skills/{skill.skill_id}/")
    expect(page.get_by_test_id("timeline")).to_contain_text("Also say who signs off")
    page.get_by_role("link", name="New revision").click()
    page.fill("#id_instruction_body", body + "3. The release manager signs off.\n")
    page.fill("input[name=message]", "Name who signs off")
    page.get_by_test_id("save-publish").click()
    expect(page.locator(".flash")).to_contain_text("Revision #2 proposed for review")

    page = admin.page
    page.goto(f"/w/{ws}/review/")
    page.get_by_test_id("review-queue").get_by_role("link").first.click()
    diff = page.get_by_test_id("diff")
    expect(diff.locator("ins").first).to_contain_text("release manager signs off")
    _shot(page, "review-diff")
    page.get_by_test_id("approve").click()
    expect(page.locator(".flash")).to_contain_text("approved and published")
    expect(page.get_by_test_id("timeline")).to_contain_text("published")

    page.goto(f"/w/{ws}/skills/")
    expect(page.get_by_test_id("skill-list")).to_contain_text("#2")
    _shot(page, "skills-list")
    assert author.dialogs == admin.dialogs == []
    assert author.csp_violations == admin.csp_violations == []

    _, secret = make_token(team["author"], scopes=["skills:read"])
    request = urllib.request.Request(
        f"{live_server.url}/v1/recall?slug={ws}/release",
        headers={"Authorization": f"Bearer {secret}"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        answer = json.load(response)
    published = SkillRevision.objects.get(skill=skill, revision_number=2)
    assert answer["kind"] == "root"
    assert answer["data"]["revision_id"] == published.revision_id
    assert answer["data"]["resolved_by"] == "published"
    assert "release manager signs off" in answer["data"]["instruction_body"]


def _skill_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(
            "onboarding/SKILL.md",
            "---\nname: Onboarding\ndescription: First week for new engineers.\n---\n"
            "# Onboarding\n\nWork through the checklist.\n",
        )
        archive.writestr("onboarding/templates/checklist.md", "- [ ] Laptop\n- [ ] Repos\n")
    return buffer.getvalue()


def test_admin_imports_a_zip_and_exports_a_capsule(sign_in: Any, team: dict[str, Any]) -> None:
    ws = team["ws"].slug
    admin = sign_in(team["admin"])
    page = admin.page
    page.goto(f"/w/{ws}/import/")
    page.set_input_files(
        "input[name=file]",
        files=[{"name": "onboarding.zip", "mimeType": "application/zip", "buffer": _skill_zip()}],
    )
    page.get_by_test_id("start-import").click()
    progress = page.get_by_test_id("job-progress")
    expect(progress).to_have_attribute("data-state", "succeeded")
    expect(progress.locator("progress")).to_have_attribute("value", "1")
    expect(page.get_by_test_id("job-result")).to_contain_text("onboarding")
    _shot(page, "import-progress")
    page.get_by_test_id("job-result").get_by_role("link", name="onboarding").click()
    expect(page.get_by_test_id("components")).to_contain_text("templates/checklist.md")
    skill = Skill.objects.get(workspace=team["ws"], slug="onboarding")
    assert skill.latest_revision.source == "import-zip"

    page.get_by_role("link", name="Export", exact=True).last.click()
    page.get_by_label("One skill, every revision").check()
    page.select_option("select[name=skill_id]", skill.skill_id)
    page.get_by_test_id("start-export").click()
    expect(page.get_by_test_id("job-progress")).to_have_attribute("data-state", "succeeded")
    with page.expect_download() as download_info:
        page.get_by_test_id("job-download").click()
    data = Path(download_info.value.path()).read_bytes()
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert any(name.endswith("SKILL.md") for name in names)
    assert any(name.endswith("templates/checklist.md") for name in names)
    assert Job.objects.filter(kind="export", state="succeeded").count() == 1
    assert admin.csp_violations == []


def test_hostile_body_is_inert_in_preview_and_review(sign_in: Any, team: dict[str, Any]) -> None:
    ws = team["ws"].slug
    author = sign_in(team["author"])
    page = author.page
    page.goto(f"/w/{ws}/skills/new/")
    _write_skill(page, slug="hostile", body=HOSTILE_BODY, component=None)
    preview = page.get_by_test_id("preview")
    expect(preview).to_contain_text("Visible marker text.")
    expect(preview).to_contain_text("<script>")  # shown as text, not run
    assert preview.locator("script, img, svg, [onerror], [onload]").count() == 0
    assert preview.locator("a[href^='javascript' i]").count() == 0
    page.get_by_test_id("save-publish").click()
    expect(page.get_by_test_id("review-banner")).to_be_visible()
    expect(page.get_by_test_id("rendered-body")).to_contain_text("Visible marker text.")
    assert author.xss_flag() is None

    admin = sign_in(team["admin"])
    revision = SkillRevision.objects.get(skill__slug="hostile")
    admin.page.goto(f"/w/{ws}/revisions/{revision.revision_id}/review/")
    body = admin.page.get_by_test_id("rendered-body")
    expect(body).to_contain_text("Visible marker text.")
    assert body.locator("script, img, svg, a[href^='javascript' i]").count() == 0
    admin.page.wait_for_timeout(300)  # give any injected handler a chance to fire
    assert admin.xss_flag() is None
    assert author.xss_flag() is None
    assert author.dialogs == []
    assert admin.dialogs == []


def test_skills_list_fits_360px(sign_in: Any, team: dict[str, Any]) -> None:
    from tests.factories import save

    for slug in ("a-very-long-skill-slug-that-could-overflow-a-narrow-screen", "deploy"):
        save(team["author"], team["ws"], slug=slug, intent="publish")
    narrow = sign_in(team["admin"], width=360)
    page = narrow.page
    page.goto(f"/w/{team['ws'].slug}/skills/")
    expect(page.get_by_test_id("skill-list")).to_contain_text("deploy")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 360
    _shot(page, "skills-list-360")
    assert Workspace.objects.filter(slug="acme").exists()


def invite_and_join(
    owner: Page, browser: Browser, base_url: str, *, ws: str, email: str, username: str, role: str
) -> User:
    """The owner invites ``email`` from the members page; the invitee opens the link in the
    captured e-mail in a fresh browser, creates ``username`` and lands in the team."""
    from django.core import mail

    from tests.mail import last_invite_path

    mail.outbox.clear()
    owner.goto(f"/w/{ws}/members/")
    form = owner.get_by_test_id("invite-form")
    form.get_by_label("E-mail address").fill(email)
    form.get_by_label("Role").select_option(role)
    form.get_by_role("button", name="Send invitation").click()
    expect(owner.locator(".flash")).to_contain_text(f"Invitation sent to {email}")
    expect(owner.get_by_test_id("invitations")).to_contain_text(email)
    [message] = mail.outbox
    assert message.to == [email]

    context = browser.new_context(base_url=base_url)
    try:
        page = context.new_page()
        page.set_default_timeout(10_000)
        page.goto(last_invite_path())
        expect(page.get_by_test_id("invitation")).to_contain_text("Join Team")
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password", exact=True).fill(PASSWORD)
        page.get_by_label("Password again").fill(PASSWORD)
        _shot(page, "invitation")
        page.get_by_role("button", name="Create account and join").click()
        expect(page).to_have_url(re.compile(f"/w/{ws}/skills/$"))
        expect(page.locator(".flash")).to_contain_text("Welcome to Team")
        page.goto(f"/w/{ws}/members/")
        expect(page.get_by_test_id("members")).to_contain_text(f"{username} (you)")
    finally:
        context.close()
    user = User.objects.get(username=username)
    assert user.email == email
    assert Workspace.objects.filter(slug=username, kind="personal").exists()
    return user


def test_owner_invites_and_the_invitee_creates_an_account_from_the_email(
    sign_in: Any, team: dict[str, Any], browser: Browser, live_server: Any
) -> None:
    owner = sign_in(team["owner"]).page
    ivy = invite_and_join(
        owner,
        browser,
        live_server.url,
        ws=team["ws"].slug,
        email="ivy@example.com",
        username="ivy",
        role="admin",
    )
    assert ivy.memberships.get(workspace=team["ws"]).role == "admin"


def test_new_skill_on_a_taken_slug_then_a_conflict_rebases_cleanly(
    sign_in: Any, team: dict[str, Any]
) -> None:
    """Issue 25 #15 and #16 as the author sees them: "New skill" with a slug in use says so and
    links to that skill (nothing saved), and the "someone saved first" editor holds the plain
    values the author typed, so "Rebase and save" succeeds."""
    from tests.factories import save

    ws = team["ws"].slug
    first = save(team["author"], team["ws"], slug="release").revision
    author = sign_in(team["author"])
    page = author.page
    page.goto(f"/w/{ws}/skills/new/")
    _write_skill(page, slug="release", body="# Other\n", component=None)
    page.get_by_test_id("save-draft").click()
    expect(page.locator(".field.has-error")).to_contain_text("already exists")
    expect(page.locator("input[name=name]")).to_have_value("Release checklist")
    page.get_by_test_id("slug-taken").click()
    expect(page).to_have_url(re.compile(f"/skills/{first.skill.skill_id}/$"))
    assert SkillRevision.objects.filter(skill=first.skill).count() == 1

    page.get_by_role("link", name="New revision").click()
    # The live server shares this test's in-memory SQLite connection: the test writes only once
    # the editor has loaded and its first preview (fired on load) has returned.
    expect(page.locator("#id_instruction_body")).to_be_visible()
    page.wait_for_load_state("networkidle")
    save(team["admin"], team["ws"], slug="release", description="Their description.")
    page.fill("input[name=name]", "Release notes writer")
    page.fill("#id_instruction_body", "my words\n")
    page.get_by_test_id("save-draft").click()
    expect(page.get_by_test_id("conflict")).to_be_visible()
    expect(page.locator("input[name=name]")).to_have_value("Release notes writer")
    expect(page.locator("#id_instruction_body")).to_have_value("my words\n")
    page.get_by_test_id("save-draft").click()
    expect(page.locator(".flash")).to_contain_text("Revision #3 saved as a draft")
    latest = Skill.objects.get(pk=first.skill.pk).latest_revision
    assert (latest.name, latest.instruction_body) == ("Release notes writer", "my words\n")
    assert latest.description == "Their description."  # their change, merged in


def test_the_conflict_editor_merges_both_edits_and_shows_an_overlap(
    sign_in: Any, team: dict[str, Any]
) -> None:
    """Issue 37 #9: "rebased onto revision #2" offered the author's text without the
    colleague's change, so "Rebase and save" dropped it. Now the colleague's change elsewhere
    is merged in, the one place both changed keeps both sides (and says so), and after the
    author resolves it the saved revision holds every non-overlapping edit."""
    from tests.factories import save

    ws = team["ws"].slug
    lines = ["# Release", "", "One.", "Two.", "Three.", "Four.", "Five.", "Six.", "Seven."]
    base = "\n".join(lines) + "\n"
    first = save(team["author"], team["ws"], slug="release", instruction_body=base).revision
    page = sign_in(team["author"]).page
    page.goto(f"/w/{ws}/skills/{first.skill.skill_id}/edit/")
    expect(page.locator("#id_instruction_body")).to_be_visible()
    page.wait_for_load_state("networkidle")  # the live server shares this test's connection
    theirs = base.replace("Two.", "Two, by the admin.").replace("Six.", "Six (theirs).")
    save(team["admin"], team["ws"], slug="release", instruction_body=theirs)
    mine = base.replace("Four.", "Four, by the author.").replace("Six.", "Six (mine).")
    page.fill("#id_instruction_body", mine)
    page.get_by_test_id("save-draft").click()

    expect(page.get_by_test_id("conflict")).to_be_visible()
    overlap = page.get_by_test_id("overlap")
    expect(overlap).to_have_count(1)
    expect(overlap).to_contain_text("Instructions, line 8")
    expect(overlap).to_contain_text("Six (mine).")
    expect(overlap).to_contain_text("Six (theirs).")
    merged = page.locator("#id_instruction_body").input_value()
    assert merged == (
        "# Release\n\nOne.\nTwo, by the admin.\nThree.\nFour, by the author.\nFive.\n"
        "<<<<<<< your version\nSix (mine).\n=======\nSix (theirs).\n>>>>>>> revision #2\n"
        "Seven.\n"
    )
    _shot(page, "editor-conflict")
    resolved = re.sub(r"<<<<<<< .*?>>>>>>> revision #2\n", "Six (mine).\n", merged, flags=re.S)
    page.fill("#id_instruction_body", resolved)
    page.get_by_test_id("save-draft").click()
    expect(page.locator(".flash")).to_contain_text("Revision #3 saved as a draft")
    latest = Skill.objects.get(pk=first.skill.pk).latest_revision
    assert latest.instruction_body == theirs.replace("Six (theirs).", "Six (mine).").replace(
        "Four.", "Four, by the author."
    )
