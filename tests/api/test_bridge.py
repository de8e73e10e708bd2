"""The bridge's endpoints (docs/contract.md §17): GET /v1/sync, GET /v1/revisions/{id}/bundle,
POST /v1/skills/lint, and the warnings of a save."""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile
from typing import Any

from skills_app.domain.canonical import canonical_hash
from skills_app.formats.capsule import capsule_write
from skills_app.models import Skill, SkillRevision
from skills_app.services.jobs.run import _capsule_revision
from skills_app.services.labels import label_move
from skills_app.services.skills import revision_transition
from tests.api.conftest import ApiFactory, error_code
from tests.factories import Env, actor_for, component, publish, save

SYNC = "/v1/sync"
LINT = "/v1/skills/lint"


def _capsule_files(revision: SkillRevision) -> dict[str, bytes]:
    """What a one-revision capsule holds, minus capsule.json: what sync must write."""
    data = capsule_write(_capsule_revision(revision))  # the export job's own capsule row
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {
            info.filename: archive.read(info)
            for info in archive.infolist()
            if info.filename != "capsule.json"
        }


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_sync_lists_what_level1_serves_with_the_capsule_files(
    env: Env, api_for: ApiFactory
) -> None:
    components = (component("references/a.md", "# A\n"), component("assets/x.bin", b"\x00\xff"))
    deploy = publish(env.owner, env.personal, "deploy", components=components).revision
    # Personal drafts stay on the server: a skill with only a draft is not listed, and a newer
    # draft never replaces the published revision (issue 37 item 8).
    save(env.owner, env.personal, "drafty", name="Drafty")
    save(env.owner, env.personal, "deploy", components=components, instruction_body="my draft")
    archived = publish(env.owner, env.personal, "old").revision
    Skill.objects.filter(pk=archived.skill_id).update(status=Skill.Status.ARCHIVED)
    team_pub = publish(env.owner, env.team, "team-skill").revision
    # A newer proposal in the team never replaces the published revision on a laptop ...
    save(env.member, env.team, "team-skill", intent="publish", instruction_body="unreviewed")
    # ... and a team skill without a reviewed revision is not listed at all.
    save(env.member, env.team, "team-draft", intent="publish")

    response = api_for(env.owner).get(SYNC)

    assert response.status_code == 200, response.content
    assert response["Cache-Control"] == "private, no-cache"
    listed = {(s["workspace"], s["slug"]): s for s in response.json()["skills"]}
    assert set(listed) == {(env.personal.slug, "deploy"), (env.team.slug, "team-skill")}
    for (_, slug), revision in {("", "deploy"): deploy, ("", "team-skill"): team_pub}.items():
        entry = next(s for s in listed.values() if s["slug"] == slug)
        files = _capsule_files(revision)
        assert entry == {
            "slug": slug,
            "workspace": revision.workspace.slug,
            "skill_id": revision.skill.skill_id,
            "revision_id": revision.revision_id,
            "revision_number": revision.revision_number,
            "canonical_hash": revision.canonical_hash,
            "files": [
                {"path": path, "sha256": _sha(data), "size": len(data)}
                for path, data in files.items()
            ],
        }
        assert entry["files"][0]["path"] == "SKILL.md"
    assert [f["path"] for f in listed[(env.personal.slug, "deploy")]["files"]] == [
        "SKILL.md",
        "assets/x.bin",
        "references/a.md",
    ]


def test_sync_narrows_to_named_workspaces_and_answers_304(env: Env, api_for: ApiFactory) -> None:
    publish(env.owner, env.personal, "mine")
    publish(env.owner, env.team, "ours")
    api = api_for(env.owner)

    only_team = api.get(f"{SYNC}?workspace={env.team.slug}")
    assert [s["slug"] for s in only_team.json()["skills"]] == ["ours"]
    etag = only_team["ETag"]
    assert api.get(f"{SYNC}?workspace={env.team.slug}", If_None_Match=etag).status_code == 304
    publish(env.owner, env.team, "ours", instruction_body="changed")
    changed = api.get(f"{SYNC}?workspace={env.team.slug}", If_None_Match=etag)
    assert changed.status_code == 200
    assert changed["ETag"] != etag
    both = api.get(f"{SYNC}?workspace={env.team.slug}&workspace={env.personal.slug}")
    assert [s["workspace"] for s in both.json()["skills"]] == sorted(
        [env.team.slug, env.personal.slug]
    )
    assert {s["slug"] for s in both.json()["skills"]} == {"mine", "ours"}


def _label(user: Any, revision: SkillRevision, name: str) -> None:
    label_move(
        actor=actor_for(user), skill=revision.skill, name=name, revision_id=revision.revision_id
    )


def test_sync_with_a_label_serves_the_labelled_revisions_and_published_ones_elsewhere(
    env: Env, api_for: ApiFactory
) -> None:
    deploy_v1 = publish(env.owner, env.personal, "deploy").revision
    deploy_v2 = save(env.owner, env.personal, "deploy", instruction_body="# Two\n").revision
    plain = publish(env.owner, env.personal, "plain").revision
    save(env.owner, env.personal, "drafty", name="Drafty")  # a personal draft: never listed
    team_v1 = publish(env.owner, env.team, "team-skill").revision
    team_v2 = save(
        env.member, env.team, "team-skill", intent="publish", instruction_body="# Proposed\n"
    ).revision
    # A team skill with no reviewed revision: listed only because the label names one.
    team_new = save(env.member, env.team, "team-new", intent="publish").revision
    save(env.member, env.team, "team-draft", intent="publish")  # neither label nor review
    _label(env.owner, deploy_v2, "staging")
    _label(env.owner, team_v2, "staging")
    _label(env.owner, team_new, "staging")
    _label(env.owner, plain, "production")  # another label: not what staging asks for
    api = api_for(env.owner)

    response = api.get(SYNC, {"label": "staging"})

    assert response.status_code == 200, response.content
    listed = {s["slug"]: s for s in response.json()["skills"]}
    assert {slug: s["revision_id"] for slug, s in listed.items()} == {
        "deploy": deploy_v2.revision_id,
        "plain": plain.revision_id,
        "team-skill": team_v2.revision_id,
        "team-new": team_new.revision_id,
    }
    assert listed["team-skill"]["canonical_hash"] == team_v2.canonical_hash
    assert listed["team-skill"]["files"][0]["sha256"] == _sha(_capsule_files(team_v2)["SKILL.md"])
    # The same revisions Level 1 serves: by the label where the skill has it, else published.
    for slug, entry in listed.items():
        qualified = f"{entry['workspace']}/{slug}"
        by_label = api.get("/v1/recall", {"slug": qualified, "label": "staging"})
        if by_label.status_code == 404:
            assert error_code(by_label) == "LABEL_NOT_FOUND"
            by_label = api.get("/v1/recall", {"slug": qualified})
        assert by_label.json()["data"]["revision_id"] == entry["revision_id"], slug
    # Without the label, nothing changed: the published revisions (team rules of §5).
    unlabelled = {s["slug"]: s["revision_id"] for s in api.get(SYNC).json()["skills"]}
    assert unlabelled["deploy"] == deploy_v1.revision_id
    assert unlabelled["team-skill"] == team_v1.revision_id
    assert "team-new" not in unlabelled
    assert api.get(SYNC, {"label": ""}).json() == api.get(SYNC).json()  # empty: not given


def test_the_sync_etag_moves_with_the_label(env: Env, api_for: ApiFactory) -> None:
    first = publish(env.owner, env.personal, "deploy").revision
    second = save(env.owner, env.personal, "deploy", instruction_body="# Two\n").revision
    _label(env.owner, first, "staging")
    api = api_for(env.owner)
    url = f"{SYNC}?label=staging"
    before = api.get(url)
    etag = before["ETag"]
    plain_etag = api.get(SYNC)["ETag"]
    assert api.get(url, If_None_Match=etag).status_code == 304

    _label(env.owner, second, "staging")
    moved = api.get(url, If_None_Match=etag)
    assert moved.status_code == 200
    assert moved["ETag"] != etag
    assert [s["revision_id"] for s in moved.json()["skills"]] == [second.revision_id]
    assert api.get(SYNC)["ETag"] == plain_etag  # the unlabelled answer did not change
    _label(env.owner, first, "staging")
    assert api.get(url, If_None_Match=etag).status_code == 304  # a digest of the answer


def test_sync_refuses_a_bad_label_name(env: Env, api_for: ApiFactory) -> None:
    publish(env.owner, env.personal, "deploy")
    api = api_for(env.owner)
    for bad in ("Staging", "no spaces", "x" * 33, "published", "latest"):
        refused = api.get(SYNC, {"label": bad})
        assert refused.status_code == 400, bad
        assert error_code(refused) == "VALIDATION_ERROR"
        assert refused.json()["error"]["details"]["field"] == "label", bad


def test_sync_refuses_strangers_and_switched_off_workspaces(env: Env, api_for: ApiFactory) -> None:
    publish(env.owner, env.team, "ours")
    stranger = api_for(env.outsider).get(f"{SYNC}?workspace={env.team.slug}")
    assert stranger.status_code == 404
    assert api_for(env.outsider).get(SYNC).json() == {"skills": []}
    env.team.cloud_skills_enabled = False
    env.team.save()
    assert api_for(env.owner).get(SYNC).json() == {"skills": []}


def test_bundle_holds_the_capsule_files_and_the_hashed_fields(
    env: Env, api_for: ApiFactory
) -> None:
    components = (component("references/a.md", "# A\n"), component("assets/x.bin", b"\x00\xff"))
    revision = publish(
        env.owner, env.personal, "deploy", name="Deploy runbook", components=components
    ).revision
    api = api_for(env.owner)

    response = api.get(f"/v1/revisions/{revision.revision_id}/bundle")

    assert response.status_code == 200, response.content
    assert response["Cache-Control"] == "private, no-cache"
    data = response.json()
    assert data.pop("scan") == {
        "verdict": "pending",
        "findings": [],
        "scanner_version": None,
    }
    files = _capsule_files(revision)
    assert files["SKILL.md"].startswith(b"---\nname: deploy\ndescription: ")
    assert b"\nmetadata:\n  xmemo-display-name: Deploy runbook\n" in files["SKILL.md"]
    assert data == {
        "revision_id": revision.revision_id,
        "canonical_hash": revision.canonical_hash,
        "name": "Deploy runbook",
        "description": revision.description,
        "frontmatter": {"license": "MIT"},
        "instruction_body": revision.instruction_body,
        "files": [
            {
                "path": "SKILL.md",
                "type": None,
                "encoding": "utf-8",
                "content": files["SKILL.md"].decode(),
                "sha256": _sha(files["SKILL.md"]),
            },
            {
                "path": "assets/x.bin",
                "type": "reference",
                "encoding": "base64",
                "content": base64.b64encode(b"\x00\xff").decode(),
                "sha256": _sha(b"\x00\xff"),
            },
            {
                "path": "references/a.md",
                "type": "reference",
                "encoding": "utf-8",
                "content": "# A\n",
                "sha256": _sha(b"# A\n"),
            },
        ],
    }
    # Everything the hash needs is there, without YAML.
    assert data["canonical_hash"] == canonical_hash(
        name=data["name"],
        description=data["description"],
        frontmatter=data["frontmatter"],
        instruction_body=data["instruction_body"],
        components=[(f["path"], f["type"], f["sha256"]) for f in data["files"][1:]],
    )
    etag = response["ETag"]
    again = api.get(f"/v1/revisions/{revision.revision_id}/bundle", If_None_Match=etag)
    assert again.status_code == 304


def test_bundle_is_tenant_gated_like_the_revision(env: Env, api_for: ApiFactory) -> None:
    proposed = save(env.member, env.team, "ours", intent="publish").revision
    path = f"/v1/revisions/{proposed.revision_id}/bundle"
    assert api_for(env.outsider).get(path).status_code == 404
    # A member may read a pinned proposal, as GET /v1/revisions/{id} allows.
    assert api_for(env.member2).get(path).status_code == 200
    revision_transition(actor=actor_for(env.owner), revision=proposed, action="approve")
    missing = api_for(env.owner).get("/v1/revisions/rev_nope/bundle")
    assert (missing.status_code, error_code(missing)) == (404, "NOT_FOUND")


def _lint_body(**overrides: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "slug": "deploy",
        "name": "deploy",
        "description": "Deploy the web app safely. Use when shipping a release to production.",
        "instruction_body": "# Deploy\n\nStep one.\n",
    }
    values.update(overrides)
    return values


def test_lint_of_a_good_skill_has_no_errors_and_stores_nothing(
    env: Env, api_for: ApiFactory
) -> None:
    response = api_for(env.owner).post(
        LINT,
        _lint_body(components=[{"logical_path": "references/a.md", "type": "reference",
                                "content": "# A\n" * 10}]),
    )  # fmt: skip
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["errors"] == []
    assert data["warnings"] == []
    assert set(data["approx_tokens"]) == {"level0", "level1", "components"}
    assert data["approx_tokens"]["components"] == {"references/a.md": 10}  # 40 ASCII chars
    assert 0 < data["approx_tokens"]["level0"] < data["approx_tokens"]["level1"]
    assert not Skill.objects.exists()


def test_lint_collects_every_broken_rule_and_the_advice(env: Env, api_for: ApiFactory) -> None:
    response = api_for(env.owner).post(
        LINT,
        _lint_body(
            workspace=env.personal.slug,
            slug="Bad--Slug",
            name=" ",
            description="Deploys.",
            instruction_body="x" * 70_000,
            frontmatter={"compatibility": 5},
            components=[
                {"logical_path": "../up.md", "type": "reference", "content": "a"},
                {"logical_path": "big.bin", "type": "artifact", "content": "a" * 140_000},
            ],
            message="m" * 2001,
        ),
    )
    assert response.status_code == 200, response.content
    data = response.json()
    assert [(e["code"], e["field"]) for e in data["errors"]] == [
        ("VALIDATION_ERROR", "slug"),
        ("VALIDATION_ERROR", "message"),
        ("VALIDATION_ERROR", "name"),
        ("BODY_TOO_LARGE", ""),
        ("VALIDATION_ERROR", "compatibility"),
        ("INVALID_PATH", data["errors"][5]["field"]),
        ("COMPONENT_TOO_LARGE", "big.bin"),
    ]
    assert all(e["message"] for e in data["errors"])
    assert [w["code"] for w in data["warnings"]] == ["DESCRIPTION_WITHOUT_WHEN", "BODY_LONG"]
    assert not Skill.objects.exists()


def test_lint_names_the_team_rules_and_a_stranger_gets_404(env: Env, api_for: ApiFactory) -> None:
    reader = api_for(env.member, scopes=["skills:read"]).post(LINT, _lint_body())
    assert (reader.status_code, error_code(reader)) == (403, "PERMISSION_DENIED")
    stranger = api_for(env.outsider).post(LINT, _lint_body(workspace=env.team.slug))
    assert stranger.status_code == 404
    named = api_for(env.member).post(LINT, _lint_body(workspace=env.team.slug, intent="publish"))
    assert named.json()["errors"] == []
    env.team.cloud_skills_enabled = False
    env.team.save()
    off = api_for(env.member).post(LINT, _lint_body(workspace=env.team.slug))
    assert [e["code"] for e in off.json()["errors"]] == ["FEATURE_DISABLED"]


def test_save_answers_carry_the_lint_warnings(env: Env, api_for: ApiFactory) -> None:
    response = api_for(env.owner).post(
        "/v1/skills/save",
        _lint_body(workspace=env.personal.slug, name="Something else", description="Deploys."),
    )
    assert response.status_code == 201
    assert [(w["code"], w["field"]) for w in response.json()["warnings"]] == [
        ("NAME_NOT_FOLDER", "name"),
        ("DESCRIPTION_WITHOUT_WHEN", "description"),
    ]


def test_lint_warns_about_each_key_the_agent_skills_validator_refuses(
    env: Env, api_for: ApiFactory
) -> None:
    """Issue 37 item 7: one ``UNKNOWN_TOP_LEVEL_KEY`` per top-level key ``skills-ref validate``
    refuses (the product's own dialects included: kept and used, but not portable); the keys
    of the Agent Skills format draw none."""
    frontmatter = {
        "license": "MIT",
        "compatibility": "Node 20",
        "allowed-tools": ["Read"],
        "metadata": {"team": "sre"},
        "when_to_use": "When paged.",
        "invoke": {"user": True},
    }
    response = api_for(env.owner).post(LINT, _lint_body(frontmatter=frontmatter))
    assert response.status_code == 200, response.content
    unknown = [w for w in response.json()["warnings"] if w["code"] == "UNKNOWN_TOP_LEVEL_KEY"]
    assert [w["field"] for w in unknown] == ["frontmatter.when_to_use", "frontmatter.invoke"]
    assert all("skills-ref validate" in w["message"] for w in unknown)


def test_lint_warns_about_metadata_keys_the_skills_extension_reserves(
    env: Env, api_for: ApiFactory
) -> None:
    """docs/contract.md §20: ``metadata`` keys under ``io.modelcontextprotocol/`` are reserved
    for MCP extensions; the product's own and anyone's other keys draw nothing."""
    metadata = {"io.modelcontextprotocol/skills": "x", "io.xmemo/x": 1, "team": "sre"}
    response = api_for(env.owner).post(LINT, _lint_body(frontmatter={"metadata": metadata}))
    assert response.status_code == 200, response.content
    reserved = [w for w in response.json()["warnings"] if w["code"] == "RESERVED_METADATA_KEY"]
    assert [w["field"] for w in reserved] == ["frontmatter.metadata.io.modelcontextprotocol/skills"]


def test_the_bridge_is_itself_an_agent_skill_that_passes_the_lint(
    env: Env, api_for: ApiFactory
) -> None:
    from pathlib import Path

    from skills_app.formats.skillmd import skill_md_bundle_read

    skill_md = Path(__file__).resolve().parents[2] / "clients" / "xmemo-skill" / "SKILL.md"
    bundle = skill_md_bundle_read(skill_md.read_bytes())
    assert bundle.slug == "xmemo"
    response = api_for(env.owner).post(
        LINT,
        {
            "slug": "xmemo",
            "name": bundle.name,
            "description": bundle.description,
            "instruction_body": bundle.instruction_body,
            "frontmatter": bundle.frontmatter,
        },
    )
    assert (response.json()["errors"], response.json()["warnings"]) == ([], [])


def test_an_empty_workspace_name_is_404_for_save_and_the_personal_one_for_lint(
    env: Env, api_for: ApiFactory
) -> None:
    """Found by schemathesis: an empty ``workspace`` once tripped an assertion (500)."""
    api = api_for(env.owner)
    saved = api.post("/v1/skills/save", _lint_body(workspace=""))
    assert (saved.status_code, error_code(saved)) == (404, "NOT_FOUND")
    linted = api.post(LINT, _lint_body(workspace=""))
    assert (linted.status_code, linted.json()["errors"]) == (200, [])
