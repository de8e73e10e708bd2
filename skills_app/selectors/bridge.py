"""The reads of the agent-side bridge (docs/contract.md §17): the sync listing and a revision's
bundle.

``sync_listing`` names each active skill's published revision in the enabled workspaces asked
for, never a draft (or, with a label, the revision the label points at where a skill has it),
each with its files as sync writes them (``SKILL.md`` first, then the components by path).
Three queries whatever the number of skills; a SKILL.md's digest is cached in process by
revision id, so only bodies not cached yet are loaded."""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db.models import IntegerField, Value

from skills_app import errors
from skills_app.access import Actor, readable_workspaces, require_scope, revision_for, workspace_for
from skills_app.domain import shapes
from skills_app.domain.canonical import sha256_hex
from skills_app.domain.json_bytes import encode_json
from skills_app.domain.labels import validate_label_name
from skills_app.domain.paths import is_text
from skills_app.formats.capsule import capsule_skill_md, deterministic_zip
from skills_app.formats.files import SKILL_MD
from skills_app.infra.cache import KEY_PREFIX, local_cache
from skills_app.models import Skill, SkillComponent, SkillRevision, Workspace
from skills_app.selectors.labels import label_target
from skills_app.selectors.scans import scan_summary

SYNC_MAX_WORKSPACES = 50
# The bridge's package in this repository (docs/contract.md §17) and what its download holds.
CLIENT_DIR = Path(__file__).resolve().parents[2] / "clients" / "xmemo-skill"
CLIENT_FILES = ("package.json", "README.md", "SKILL.md", "scripts/lib.mjs", "scripts/login.mjs",
                "scripts/xmemo-skill.mjs")  # fmt: skip
CLIENT_CONFIG = "config.json"


@dataclass(frozen=True)
class SyncListing:
    body: bytes  # the encoded JSON answer
    etag: str


def _workspaces(actor: Actor, names: Sequence[str]) -> list[Workspace]:
    if len(names) > SYNC_MAX_WORKSPACES:
        raise errors.ValidationFailed(
            f"Name at most {SYNC_MAX_WORKSPACES} workspaces.",
            details={"field": "workspace", "limit": SYNC_MAX_WORKSPACES},
        )
    if names:
        return [workspace_for(actor, name) for name in dict.fromkeys(names)]
    return list(readable_workspaces(actor))


def _skill_md_key(revision_id: str) -> str:
    return f"{KEY_PREFIX}skillmd:{revision_id}"


def _skill_md_digests(revisions: dict[int, dict[str, Any]]) -> dict[int, tuple[str, int]]:
    """``{revision pk: (sha256, size)}`` of each revision's capsule SKILL.md."""
    digests: dict[int, tuple[str, int]] = {}
    missing = []
    for pk, row in revisions.items():
        hit = local_cache.get(_skill_md_key(row["revision_id"]))
        if hit is None:
            missing.append(pk)
        else:
            digests[pk] = hit
    rows = SkillRevision.objects.filter(pk__in=missing).values_list(
        "pk", "name", "description", "frontmatter", "instruction_body"
    )
    for pk, name, description, frontmatter, body in rows:
        row = revisions[pk]
        data = capsule_skill_md(
            slug=row["slug"],
            name=name,
            description=description,
            frontmatter=frontmatter or {},
            instruction_body=body,
        )
        digests[pk] = (sha256_hex(data), len(data))
        local_cache.set(_skill_md_key(row["revision_id"]), digests[pk], 200)
    return digests


def sync_listing(
    *, actor: Actor, workspaces: Sequence[str] = (), label: str | None = None
) -> SyncListing:
    """``{"skills": [{slug, workspace, skill_id, revision_id, revision_number, canonical_hash,
    files: [{path, sha256, size}]}]}`` ordered by workspace and slug, with its ETag (a digest
    of the answer: it moves with every revision id, so with every move of ``label``)."""
    require_scope(actor, "skills:read")
    if label is not None:
        validate_label_name(label, field="label")
    chosen = [ws for ws in _workspaces(actor, workspaces) if ws.cloud_skills_enabled]
    served: dict[int, dict[str, Any]] = {}
    labelled = label_target(label) if label is not None else Value(None, IntegerField())
    skills = (
        Skill.objects.filter(workspace__in=chosen, status=Skill.Status.ACTIVE)
        .annotate(labelled=labelled)
        .values_list("skill_id", "slug", "workspace__slug", "published_revision_id", "labelled")
    )
    for skill_id, slug, ws_slug, published_pk, labelled_pk in skills:
        pk = labelled_pk or published_pk
        if pk is not None:
            served[pk] = {"slug": slug, "workspace": ws_slug, "skill_id": skill_id}
    for pk, revision_id, number, digest in SkillRevision.objects.filter(
        pk__in=list(served)
    ).values_list("pk", "revision_id", "revision_number", "canonical_hash"):
        served[pk].update(revision_id=revision_id, revision_number=number, canonical_hash=digest)
    files: dict[int, list[dict[str, Any]]] = {pk: [] for pk in served}
    for revision_pk, path, sha, size in (
        SkillComponent.objects.filter(revision_id__in=list(served))
        .order_by("revision_id", "logical_path")
        .values_list("revision_id", "logical_path", "content_hash", "size")
    ):
        files[revision_pk].append({"path": path, "sha256": sha, "size": size})
    digests = _skill_md_digests(served)
    entries = []
    for pk, row in served.items():
        sha, size = digests[pk]
        entries.append(
            {
                "slug": row["slug"],
                "workspace": row["workspace"],
                "skill_id": row["skill_id"],
                "revision_id": row["revision_id"],
                "revision_number": row["revision_number"],
                "canonical_hash": row["canonical_hash"],
                "files": [{"path": SKILL_MD, "sha256": sha, "size": size}, *files[pk]],
            }
        )
    entries.sort(key=lambda entry: (entry["workspace"], entry["slug"]))
    body = encode_json({"skills": entries})
    return SyncListing(body=body, etag=f'"sync-{sha256_hex(body)[:40]}"')


def _file(path: str, ctype: str | None, raw: bytes) -> shapes.BundleFile:
    text = is_text(raw)
    return {
        "path": path,
        "type": ctype,
        "encoding": "utf-8" if text else "base64",
        "content": raw.decode("utf-8") if text else base64.b64encode(raw).decode("ascii"),
        "sha256": sha256_hex(raw),
    }


def _component_files(revision: SkillRevision) -> Iterable[shapes.BundleFile]:
    rows = (
        SkillComponent.objects.filter(revision=revision)
        .order_by("logical_path")
        .values_list("logical_path", "type", "blob__data")
    )
    return (_file(path, ctype, bytes(data)) for path, ctype, data in rows)


def revision_bundle_document(*, actor: Actor, revision_id: str) -> shapes.Bundle:
    """Everything a client needs to write a revision as a skill folder and recompute its
    canonical hash without parsing YAML: the hashed fields, then the files (``SKILL.md`` with
    the capsule's bytes and type null first, then the components by path)."""
    require_scope(actor, "skills:read")
    revision = revision_for(actor, revision_id)
    skill_md = capsule_skill_md(
        slug=revision.skill.slug,
        name=revision.name,
        description=revision.description,
        frontmatter=revision.frontmatter or {},
        instruction_body=revision.instruction_body,
    )
    return {
        "revision_id": revision.revision_id,
        "canonical_hash": revision.canonical_hash,
        "name": revision.name,
        "description": revision.description,
        "frontmatter": revision.frontmatter or {},
        "instruction_body": revision.instruction_body,
        "files": [_file(SKILL_MD, None, skill_md), *_component_files(revision)],
        "scan": scan_summary(revision),
    }


def bridge_client_zip(*, server_url: str) -> bytes:
    """The bridge as a ZIP (``xmemo/…``, an Agent Skill folder) with ``config.json`` naming
    ``server_url``; it holds no token (the Connect page's download)."""
    entries = [
        (f"xmemo/{name}", (CLIENT_DIR / name).read_bytes(), 0o100755 if name.endswith("skill.mjs")
         else 0o100644)
        for name in CLIENT_FILES
    ]  # fmt: skip
    config = encode_json({"url": server_url}) + b"\n"
    entries.append((f"xmemo/{CLIENT_CONFIG}", config, 0o100644))
    return deterministic_zip(entries)
