"""Skills as the MCP Skills extension serves them (docs/contract.md §20): entries, SKILL.md and
folders, read through the same resolution and immutable content as Level 1.

An entry is ``{uri, frontmatter, resources, _meta}``: the served SKILL.md's frontmatter and
every file with the digest and size of exactly what ``resources/read`` answers. What an entry
says of a revision is cached by revision id (``infra.cache``); listings, which move with
pointers and labels, under the invalidation generation. A page costs at most five queries,
never one per skill. ``published_only`` is the ``chatgpt-public`` rule."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import astuple, dataclass
from functools import partial
from typing import Any

from django.db.models import F, Q, QuerySet
from django.db.models.functions import Coalesce

from skills_app import errors
from skills_app.access import Actor, readable_workspaces, require_scope
from skills_app.domain import shapes
from skills_app.domain.json_bytes import encode_json
from skills_app.domain.lifecycle import LATEST_FALLBACK_KINDS
from skills_app.domain.shapes.entries import (
    DirectoryChild,
    EntryResource,
    SkillEntry,
    XmemoMeta,
)
from skills_app.domain.skill_uri import SKILL_MD, SkillUri, skill_md_uri, skill_uri
from skills_app.domain.skillmd import merge_frontmatter
from skills_app.formats.capsule import capsule_skill_md
from skills_app.infra.cache import cached_immutable
from skills_app.models import Skill, SkillComponent, SkillLabel, SkillRevision
from skills_app.selectors.pagination import decode_cursor, encode_cursor, paginate_rows
from skills_app.selectors.recall.content import (
    RESOURCE_COLUMNS,
    ROOT_COLUMNS,
    RootContent,
    _root_content,
    root_content_cached,
    root_from_row,
)
from skills_app.selectors.recall.resolution import (
    PUBLISHED,
    _cached_resolution,
    _identity,
    _keyed,
    _resolve_by_slug,
    _resolve_pinned,
    _Target,
    served_scan,
)
from skills_app.selectors.recall.routing import _served, recall
from skills_app.selectors.scans import scan_summaries

PAGE = 100
DIRECTORY_MIME = "inode/directory"
SKILL_MD_MIME = "text/markdown"


@dataclass(frozen=True)
class SkillFiles:
    """What an entry says about one revision of one skill: immutable."""

    frontmatter_json: str
    description: str
    skill_md_sha256: str
    skill_md_size: int
    components: tuple[tuple[str, str, str, int, str], ...]  # path, type, sha256, size, media type


def skill_md_bytes(slug: str, content: RootContent) -> bytes:
    """The served SKILL.md: the capsule's bytes (``sync`` writes the same)."""
    return capsule_skill_md(
        slug=slug,
        name=content.name,
        description=content.description,
        frontmatter=json.loads(content.frontmatter_json),
        instruction_body=content.instruction_body,
    )


def served_frontmatter(slug: str, content: RootContent) -> dict[str, Any]:
    """The served SKILL.md's frontmatter, as a YAML reader gets it back from the file."""
    return merge_frontmatter(
        content.name, content.description, json.loads(content.frontmatter_json), slug=slug
    )


def _files(slug: str, revision_id: str, content: Callable[[], RootContent]) -> SkillFiles:
    def load() -> SkillFiles:
        root = content()
        raw = skill_md_bytes(slug, root)
        return SkillFiles(
            frontmatter_json=json.dumps(served_frontmatter(slug, root), ensure_ascii=False),
            description=root.description,
            skill_md_sha256=hashlib.sha256(raw).hexdigest(),
            skill_md_size=len(raw),
            components=root.resources,
        )

    files = cached_immutable(
        f"entry:{revision_id}:{slug}",
        load,
        encode=lambda value: encode_json(astuple(value)),
        decode=_files_decode,
    )
    assert files is not None
    return files


def _files_decode(payload: bytes) -> SkillFiles:
    frontmatter, description, sha, size, components = json.loads(payload)
    return SkillFiles(frontmatter, description, sha, size, tuple(map(tuple, components)))


def xmemo_meta(
    target: _Target, revision_number: int, canonical_hash: str, scan: dict[str, Any]
) -> XmemoMeta:
    """The product's own ``_meta`` keys, under ``io.xmemo/`` (§20), the scan summary of §21
    among them as ``io.xmemo/scan``."""
    return {
        "io.xmemo/revision_id": target.revision_id,
        "io.xmemo/revision_number": revision_number,
        "io.xmemo/state": target.state,
        "io.xmemo/labels": list(target.labels),
        "io.xmemo/canonical_hash": canonical_hash,
        "io.xmemo/scan": scan,
    }


def _entry(
    target: _Target,
    files: SkillFiles,
    revision_number: int,
    canonical_hash: str,
    scan: dict[str, Any],
    pinned: bool,
) -> SkillEntry:
    revision_id = target.revision_id if pinned else None
    uri = skill_md_uri(target.workspace, target.slug, revision_id)
    resources: list[EntryResource] = [
        {"uri": uri, "digest": f"sha256:{files.skill_md_sha256}", "size": files.skill_md_size}
    ]
    resources += [
        {
            "uri": skill_uri(target.workspace, target.slug, path, revision_id),
            "digest": f"sha256:{sha}",
            "size": size,
        }
        for path, _type, sha, size, _mt in files.components
    ]
    return {
        "uri": uri,
        "frontmatter": json.loads(files.frontmatter_json),
        "resources": resources,
        "_meta": xmemo_meta(target, revision_number, canonical_hash, scan),
    }


# --- one skill, by URI ---------------------------------------------------------------------------


def resolve(*, actor: Actor, ref: SkillUri, published_only: bool) -> tuple[_Target, RootContent]:
    """The revision ``ref`` names and its content, with Level 1's tenancy and team rules."""
    require_scope(actor, "skills:read")
    if ref.revision_id is not None:
        target = _resolve_pinned(actor, ref.revision_id, ref.slug, ref.workspace)
    else:
        fallback = "none" if published_only else "latest"
        # The same key and value as Level 1's (``_root``): one cached resolution for both.
        target, _, _ = _cached_resolution(
            ("slug", *_identity(actor), ref.slug, ref.workspace, fallback),
            lambda: _keyed(*_resolve_by_slug(actor, ref.slug, ref.workspace, fallback)),
        )
    if published_only and target.state != PUBLISHED:
        raise errors.NotFound(
            "Only published revisions are served to this client.",
            details={"revision_id": target.revision_id},
        )
    return target, _root_content(target.revision_id, target.revision_pk)


def skill_entry(*, actor: Actor, ref: SkillUri, published_only: bool) -> SkillEntry:
    """``skills/get``: the entry of the skill whose SKILL.md ``ref`` is."""
    if not ref.is_skill_md:
        raise errors.NotFound("Not a SKILL.md URI.")
    target, content = resolve(actor=actor, ref=ref, published_only=published_only)
    files = _files(target.slug, target.revision_id, lambda: content)
    pinned = ref.revision_id is not None
    return _entry(
        target, files, content.revision_number, content.canonical_hash, served_scan(target), pinned
    )


def skill_md_read(
    *, actor: Actor, ref: SkillUri, published_only: bool
) -> tuple[bytes, XmemoMeta, str]:
    """``resources/read`` of a SKILL.md: its bytes, the ``_meta`` and its description. A Level 1
    answer for usage (docs/contract.md §19): it is the skill's instructions."""
    target, content = resolve(actor=actor, ref=ref, published_only=published_only)
    raw = skill_md_bytes(target.slug, content)
    _served(actor, target, 1)
    return (
        raw,
        xmemo_meta(target, content.revision_number, content.canonical_hash, served_scan(target)),
        content.description,
    )


def component_read(*, actor: Actor, ref: SkillUri, published_only: bool) -> shapes.ResourceData:
    """``resources/read`` of any other file: Level 2's answer from the revision ``ref`` names
    (the old ``SLUG@REVISION_ID`` form too)."""
    if not ref.path or (ref.is_skill_md and not ref.legacy):
        raise errors.NotFound("Not a file of a skill.")
    target, _ = resolve(actor=actor, ref=ref, published_only=published_only)
    answer = recall(
        actor=actor, slug=ref.qualified_slug, revision_id=target.revision_id, resource=ref.path
    )
    assert answer["kind"] == "resource"
    return answer["data"]


def directory_read(
    *, actor: Actor, ref: SkillUri, cursor: str | None, published_only: bool
) -> tuple[list[DirectoryChild], str | None]:
    """``resources/directory/read``: the direct children of the skill's root or of a folder in
    it (folders as ``inode/directory``), one page; anything else is NOT_FOUND."""
    if ref.legacy or ref.path == SKILL_MD:
        raise errors.NotFound("Not a folder of a skill.")
    target, content = resolve(actor=actor, ref=ref, published_only=published_only)
    pinned = target.revision_id if ref.revision_id is not None else None
    prefix = f"{ref.path}/" if ref.path else ""
    files = (
        {SKILL_MD: (SKILL_MD_MIME, len(skill_md_bytes(target.slug, content)))} if not prefix else {}
    )
    folders: set[str] = set()
    for path, _t, _sha, size, media_type in content.resources:
        if not path.startswith(prefix):
            continue
        head, sep, _ = path[len(prefix) :].partition("/")
        if sep:
            folders.add(head)
        else:
            files[head] = (media_type, size)
    if prefix and not files and not folders:
        raise errors.NotFound("Not a folder of this skill.", details={"path": ref.path})
    children: list[tuple[str, str, int | None]] = [
        (name, DIRECTORY_MIME, None) for name in folders
    ] + [(name, mt, size) for name, (mt, size) in files.items()]
    children.sort(key=lambda child: child[0])
    start = int(decode_cursor("dir", cursor)[0]) if cursor else 0
    rows: list[DirectoryChild] = []
    for name, mime, length in children[start : start + PAGE]:
        row: DirectoryChild = {
            "uri": skill_uri(target.workspace, target.slug, prefix + name, pinned),
            "name": name,
            "mimeType": mime,
        }
        if length is not None:  # a file; a folder has no size
            row["size"] = length
        rows.append(row)
    more = start + PAGE < len(children)
    return rows, encode_cursor("dir", [start + PAGE]) if more else None


# --- listings ------------------------------------------------------------------------------------


def _listed(actor: Actor, *, skills_list: bool) -> QuerySet[Skill]:
    """The skills a listing names: for ``skills/list`` those with a published revision that
    Level 0 would show (not ``invoke.model: false``), for ``resources/list`` every skill Level 1
    serves by slug."""
    skills = Skill.objects.filter(
        workspace__in=readable_workspaces(actor), status=Skill.Status.ACTIVE
    )
    if skills_list:
        return skills.filter(published_revision__isnull=False, model_invocable=True)
    return skills.filter(
        Q(published_revision__isnull=False)
        | Q(workspace__kind__in=LATEST_FALLBACK_KINDS, current_revision__isnull=False)
    )


@dataclass(frozen=True)
class ListedSkill:
    target: _Target
    revision_number: int
    canonical_hash: str
    files: SkillFiles
    scan: dict[str, Any]


def listing(
    *, actor: Actor, cursor: str | None, skills_list: bool, published_only: bool
) -> tuple[list[ListedSkill], str | None]:
    """One page of the skills a listing names, each with its served revision's files."""
    require_scope(actor, "skills:read")
    key = ("listing", *_identity(actor), skills_list, published_only, cursor)
    return _cached_resolution(
        key, lambda: _listing(actor, cursor, skills_list=skills_list, published_only=published_only)
    )


def _listing(
    actor: Actor, cursor: str | None, *, skills_list: bool, published_only: bool
) -> tuple[list[ListedSkill], str | None]:
    skills = _listed(actor, skills_list=skills_list or published_only)
    rows = paginate_rows(
        skills.annotate(
            served_pk=F("published_revision_id")
            if skills_list or published_only
            else Coalesce("published_revision_id", "current_revision_id")
        ).select_related("workspace"),
        kind="skills-list" if skills_list else "skill-resources",
        order=[("workspace__slug", False), ("slug", False)],
        cursor=cursor,
        limit=PAGE,
    )
    served = {skill.served_pk: skill for skill in rows.results}  # type: ignore[attr-defined]
    revisions = {
        row[0]: row[1:]
        for row in SkillRevision.objects.filter(pk__in=served).values_list(
            "pk", "revision_id", "state", "revision_number", "canonical_hash"
        )
    }
    labels: dict[int, list[str]] = {}
    for revision_pk, name in SkillLabel.objects.filter(revision_id__in=served).values_list(
        "revision_id", "name"
    ):
        labels.setdefault(revision_pk, []).append(name)
    scans = scan_summaries(served)
    contents = _Contents(revisions)
    listed = []
    for revision_pk, skill in served.items():
        revision_id, state, number, canonical = revisions[revision_pk]
        target = _Target(
            revision_pk,
            revision_id,
            state,
            skill.skill_id,
            skill.slug,
            skill.workspace.slug,
            tuple(sorted(labels.get(revision_pk, ()))),
            scans[revision_pk],
        )
        files = _files(skill.slug, revision_id, partial(contents.get, revision_pk))
        listed.append(ListedSkill(target, number, canonical, files, scans[revision_pk]))
    return listed, rows.next_cursor


class _Contents:
    """The content of a page's revisions, loaded in two queries on the first one not cached."""

    def __init__(self, revisions: dict[int, tuple[Any, ...]]) -> None:
        self.revisions = revisions
        self.loaded: dict[int, RootContent] | None = None

    def get(self, revision_pk: int) -> RootContent:
        if self.loaded is None:
            self.loaded = _load_contents(self.revisions)
        return self.loaded[revision_pk]


def _load_contents(revisions: dict[int, tuple[Any, ...]]) -> dict[int, RootContent]:
    components: dict[int, list[tuple[str, str, str, int, str]]] = {}
    for revision_pk, *row in (
        SkillComponent.objects.filter(revision_id__in=revisions)
        .order_by("revision_id", "logical_path")
        .values_list("revision_id", *RESOURCE_COLUMNS)
    ):
        components.setdefault(revision_pk, []).append(tuple(row))
    loaded = {}
    for pk, *row in SkillRevision.objects.filter(pk__in=revisions).values_list("pk", *ROOT_COLUMNS):
        content = root_from_row(tuple(row), tuple(components.get(pk, ())))
        # Level 1 reads the same content: seed its cache too.
        loaded[pk] = root_content_cached(revisions[pk][0], partial(_given, content))
    return loaded


def _given(value: RootContent) -> RootContent:
    return value


def entries(listed: Iterable[ListedSkill]) -> list[SkillEntry]:
    """``skills/list``'s entries for a listing page."""
    return [
        _entry(
            item.target,
            item.files,
            item.revision_number,
            item.canonical_hash,
            item.scan,
            pinned=False,
        )
        for item in listed
    ]
