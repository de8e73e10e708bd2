"""Names hold no control characters (docs/contract.md §16b): a skill, workspace or token name with
CR/LF is refused at every door with a 400 naming the field, and nothing is stored. A CR/LF name
would otherwise be accepted and later make Django refuse the e-mail whose subject carries it
(``BadHeaderError``), so invitations and review mails were silently lost.

Descriptions may hold line breaks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from skills_app import errors
from skills_app.access import Actor
from skills_app.domain.limits import name_check
from skills_app.mcp.tools import tool_run
from skills_app.models import ApiToken, Skill, SkillRevision, Webhook, Workspace
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env, make_token
from tests.formats.fakeserver import FakeServer, Handler, fake_server, respond
from tests.formats.helpers import FIXTURES, zip_of

pytestmark = pytest.mark.django_db

# A header injection as a mail subject would carry it, and the other line breaks and controls.
HOSTILE_NAMES = [
    "Release\r\nBcc: everyone@example.com",
    "Release\nnotes",
    "Release\rnotes",
    "Tab\there",
    "Escape\x1b[31m",
    "Delete\x7f",
    "Next line\x85",
    "Line\u2028separator",
    "Paragraph\u2029separator",
]


def _payload(workspace: str, **change: Any) -> dict[str, Any]:
    return {
        "workspace": workspace,
        "slug": "release",
        "name": "Release",
        "description": "How to ship.",
        "instruction_body": "# Ship\n",
        **change,
    }


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_the_domain_rule_refuses_control_characters_naming_the_field(name: str) -> None:
    with pytest.raises(errors.ValidationFailed) as refused:
        name_check(name, field="name", limit=200, what="A skill name")
    assert refused.value.details["field"] == "name"
    assert "control character" in refused.value.message
    assert name_check("Café Review ✓", field="name", limit=200, what="A skill name") == (
        "Café Review ✓"
    )


@pytest.mark.parametrize("name", HOSTILE_NAMES[:3])
def test_rest_save_refuses_a_crlf_name(env: Env, api_for: ApiFactory, name: str) -> None:
    answer = api_for(env.owner).post("/v1/skills/save", _payload(env.personal.slug, name=name))
    assert answer.status_code == 400, answer.content
    assert error_code(answer) == "VALIDATION_ERROR"
    assert answer.json()["error"]["details"]["field"] == "name"
    assert not SkillRevision.objects.exists()


def test_a_description_may_hold_line_breaks(env: Env, api_for: ApiFactory) -> None:
    description = "How to ship.\r\nUse it when a release is due.\n"
    answer = api_for(env.owner).post(
        "/v1/skills/save", _payload(env.personal.slug, description=description)
    )
    assert answer.status_code == 201, answer.content
    assert SkillRevision.objects.get().description == description


def test_mcp_save_refuses_a_crlf_name(env: Env) -> None:
    token, _ = make_token(env.owner, ["skills:read", "skills:write"])
    with pytest.raises(errors.ValidationFailed) as refused:
        tool_run(
            name="save_cloud_skill",
            actor=Actor(user=env.owner, token=token, via="mcp"),
            arguments=_payload(env.personal.slug, name=HOSTILE_NAMES[0]),
        )
    assert refused.value.details["field"] == "name"
    assert not SkillRevision.objects.exists()


def test_console_editor_refuses_a_crlf_name(env: Env) -> None:
    client = Client()
    client.force_login(env.owner)
    answer = client.post(
        reverse("console:skill_new", args=(env.personal.slug,)),
        {
            "slug": "triage",
            "name": "Tri\r\nage",
            "description": "Triage incoming bugs.",
            "frontmatter": "",
            "instruction_body": "# Triage\n",
            "message": "",
            "intent": "draft",
        },
    )
    assert answer.status_code == 400
    assert b"control character" in answer.content
    assert not Skill.objects.exists()


# --- imports: the job fails with the code and stores nothing ------------------------------------

CRLF_SKILL_MD = (
    b'---\nname: "Hostile\\r\\nBcc: everyone@example.com"\ndescription: Hi.\n---\nBody.\n'
)


def _skill_json_zip() -> bytes:
    manifest = json.loads((FIXTURES / "disk-usage" / "skill.json").read_bytes())
    manifest["name"] = "disk\nusage"
    return zip_of(
        {
            "disk-usage/skill.json": json.dumps(manifest).encode(),
            "disk-usage/du.py": (FIXTURES / "disk-usage" / "du.py").read_bytes(),
        }
    )


UPLOADS = {
    "SKILL.md": (CRLF_SKILL_MD, "SKILL.md"),
    "ZIP": (zip_of({"hostile/SKILL.md": CRLF_SKILL_MD}), "hostile.zip"),
    "skill.json": (_skill_json_zip(), "disk-usage.zip"),
}


def _job_after(api: Any, capture: Any, **fields: Any) -> dict[str, Any]:
    with capture(execute=True):
        if "file" in fields:
            started = api.client.post("/v1/imports", fields, headers=api._headers(None))
        else:
            started = api.post("/v1/imports", fields)
    assert started.status_code == 202, started.content
    job: dict[str, Any] = api.get(f"/v1/jobs/{started.json()['job_id']}").json()
    return job


@pytest.mark.parametrize("kind", sorted(UPLOADS))
def test_an_import_with_a_crlf_name_fails_with_the_code(
    env: Env, api_for: ApiFactory, django_capture_on_commit_callbacks: Any, kind: str
) -> None:
    data, filename = UPLOADS[kind]
    job = _job_after(
        api_for(env.owner),
        django_capture_on_commit_callbacks,
        file=SimpleUploadedFile(filename, data),
        workspace=env.personal.slug,
    )
    assert job["state"] == "failed", job
    assert job["error"]["code"] == "VALIDATION_ERROR", job
    assert job["error"]["details"]["field"] == "name", job
    assert not Skill.objects.exists()


@pytest.fixture
def raw_host(settings: Any) -> Iterator[FakeServer]:
    routes: dict[str, Handler] = {"/raw/SKILL.md": respond(200, CRLF_SKILL_MD)}
    with fake_server(routes) as server:
        settings.XMEMO_IMPORT_ALLOWED_HOSTS = [server.host]
        settings.XMEMO_IMPORT_ALLOW_PRIVATE = True
        yield server


def test_a_url_import_with_a_crlf_name_fails_with_the_code(
    env: Env,
    api_for: ApiFactory,
    django_capture_on_commit_callbacks: Any,
    raw_host: FakeServer,
) -> None:
    job = _job_after(
        api_for(env.owner),
        django_capture_on_commit_callbacks,
        url=raw_host.url("/raw/SKILL.md"),
        workspace=env.personal.slug,
    )
    assert raw_host.requests, "the fake host was never asked"
    assert (job["state"], job["error"]["code"]) == ("failed", "VALIDATION_ERROR"), job
    assert job["error"]["details"]["field"] == "name", job
    assert not Skill.objects.exists()


# --- workspaces, tokens, webhooks --------------------------------------------------------------


def test_workspace_create_refuses_a_crlf_name(env: Env, api_for: ApiFactory) -> None:
    answer = api_for(env.owner).post(
        "/v1/workspaces", {"slug": "ops", "name": "Ops\r\nBcc: everyone@example.com"}
    )
    assert answer.status_code == 400, answer.content
    assert answer.json()["error"]["details"]["field"] == "name"
    assert not Workspace.objects.filter(slug="ops").exists()


def test_workspace_patch_refuses_a_crlf_name(env: Env, api_for: ApiFactory) -> None:
    before = env.team.name
    answer = api_for(env.owner).patch(f"/v1/workspaces/{env.team.slug}", {"name": "Ops\nTeam"})
    assert answer.status_code == 400, answer.content
    assert answer.json()["error"]["details"]["field"] == "name"
    env.team.refresh_from_db()
    assert env.team.name == before


def test_console_new_team_refuses_a_crlf_name(env: Env) -> None:
    client = Client()
    client.force_login(env.owner)
    answer = client.post(reverse("console:workspace_new"), {"slug": "ops", "name": "Ops\r\nTeam"})
    assert b"control character" in answer.content
    assert not Workspace.objects.filter(slug="ops").exists()


def test_token_create_refuses_a_crlf_name(env: Env, api_for: ApiFactory) -> None:
    api = api_for(env.owner)
    tokens = ApiToken.objects.count()
    answer = api.post("/v1/tokens", {"name": "ci\r\nbot", "scopes": ["skills:read"]})
    assert answer.status_code == 400, answer.content
    assert answer.json()["error"]["details"]["field"] == "name"
    assert ApiToken.objects.count() == tokens


def test_webhook_create_refuses_a_crlf_url(env: Env, api_for: ApiFactory, settings: Any) -> None:
    """Webhooks have no name: what a person types is the URL, and it is refused alike."""
    settings.XMEMO_WEBHOOK_ALLOW_PRIVATE = True
    answer = api_for(env.admin).post(
        f"/v1/workspaces/{env.team.slug}/webhooks",
        {"url": "http://127.0.0.1:9/hook\r\nX-Injected: 1", "events": ["skill.archived"]},
    )
    assert answer.status_code == 400, answer.content
    assert answer.json()["error"]["details"]["field"] == "url"
    assert not Webhook.objects.exists()


# --- issue 37 #11: bidirectional and invisible formatting characters (Unicode Cf) ---------------

INVISIBLE_NAMES = [
    "Release\u202etxt.exe",  # RIGHT-TO-LEFT OVERRIDE: reads "Releaseexe.txt"
    "Release\u2066notes\u2069",  # LEFT-TO-RIGHT ISOLATE … POP DIRECTIONAL ISOLATE
    "Re\u200blease",  # ZERO WIDTH SPACE
    "Re\u200dlease",  # ZERO WIDTH JOINER
    "\ufeffRelease",  # BYTE ORDER MARK
    "Release\u00ad",  # SOFT HYPHEN
]


@pytest.mark.parametrize("name", INVISIBLE_NAMES)
def test_the_domain_rule_refuses_bidi_and_invisible_characters(name: str) -> None:
    with pytest.raises(errors.ValidationFailed) as refused:
        name_check(name, field="name", limit=200, what="A skill name")
    assert refused.value.details["field"] == "name"
    assert "formatting character (U+" in refused.value.message


def test_every_door_refuses_a_bidi_override_in_a_name(env: Env, api_for: ApiFactory) -> None:
    owner = api_for(env.owner)
    tokens = ApiToken.objects.count()
    name = "Ops\u202etxt.exe"
    answers = [
        owner.post("/v1/skills/save", _payload(env.personal.slug, name=name)),
        owner.post("/v1/workspaces", {"slug": "ops", "name": name}),
        owner.patch(f"/v1/workspaces/{env.team.slug}", {"name": name}),
        owner.post("/v1/tokens", {"name": name, "scopes": ["skills:read"]}),
    ]
    for answer in answers:
        assert answer.status_code == 400, answer.content
        assert error_code(answer) == "VALIDATION_ERROR"
        assert answer.json()["error"]["details"]["field"] == "name"
    assert not SkillRevision.objects.exists()
    assert not Workspace.objects.filter(slug="ops").exists()
    assert ApiToken.objects.count() == tokens


def test_a_webhook_name_is_refused_never_dropped(
    env: Env, api_for: ApiFactory, settings: Any
) -> None:
    """Webhooks have no name (docs/contract.md §16b): one sent is refused with 400, not
    silently dropped."""
    settings.XMEMO_WEBHOOK_ALLOW_PRIVATE = True
    answer = api_for(env.admin).post(
        f"/v1/workspaces/{env.team.slug}/webhooks",
        {"url": "http://127.0.0.1:9/hook", "events": ["skill.archived"], "name": "CI"},
    )
    assert answer.status_code == 400, answer.content
    assert error_code(answer) == "VALIDATION_ERROR"
    assert answer.json()["error"]["details"]["field"] == "name"
    assert not Webhook.objects.exists()
