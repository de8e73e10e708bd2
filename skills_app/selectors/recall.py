"""Progressive recall (SPEC §5): Level 0 search, Level 1 root, Level 2 resource.

REST (``GET /v1/recall``) and MCP (``recall_cloud_skill``) both call these functions and send
what they return, so the two front doors answer byte-for-byte alike. Every answer is
``{"kind": …, "data": {…}}``; every failure is a ``skills_app.errors`` exception.

Cost per request. Resolving a slug (or a pinned revision id) to a revision, tenancy included
(membership, token restriction, feature switch), is one indexed, prepared query
(``infra.db``); its answer is cached per process under the invalidation generation of
``infra.invalidation``, which moves with every committed change on PostgreSQL (LISTEN/
NOTIFY), so a warm request usually makes no query at all and never serves a resolution older
than the last commit it could have seen. A revision's content and components are immutable and
cached by revision id (``infra.cache``: in-process LRU, then the Django cache); REST also
keeps the encoded JSON of an immutable answer. Cold, Level 1 adds one query for the revision
and one for its component listing, Level 2 one for the component's bytes — never one per
component, revision or skill.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from dataclasses import astuple, dataclass
from typing import Any, NamedTuple, TypedDict, TypeVar, Unpack

from .. import errors
from ..access import (
    Actor,
    readable_workspace_sql,
    require_enabled_workspace,
    require_scope,
    workspace_for,
)
from ..domain.lifecycle import LATEST_FALLBACK_KINDS
from ..domain.limits import validate_slug
from ..domain.paths import is_text
from ..domain.render import render_body
from ..domain.wire import encode_json
from ..infra import db, invalidation
from ..infra.cache import cached_immutable, local_cache
from ..models import Skill, SkillComponent, SkillRevision, Workspace
from .search import search_skills

SEARCH_DEFAULT_LIMIT = 10
SEARCH_MAX_LIMIT = 50
QUERY_MAX_LENGTH = 1000
ARGUMENTS_MAX_LENGTH = 10_000
FALLBACKS = ("latest", "none")

_SKILL = Skill._meta.db_table
_WS = Workspace._meta.db_table
_REV = SkillRevision._meta.db_table

PUBLISHED = SkillRevision.State.PUBLISHED


# --- public entry points ------------------------------------------------------------------------


class Encoded(NamedTuple):
    """A recall answer as the REST body: the same JSON ``recall`` returns, already encoded."""

    kind: str
    body: bytes
    etag: str | None


class RecallArgs(TypedDict, total=False):
    """The arguments of ``recall_cloud_skill`` and ``GET /v1/recall`` (SPEC §5)."""

    query: str | None
    slug: str | None
    workspace: str | None
    revision_id: str | None
    resource: str | None
    arguments: str | None
    fallback: str | None
    limit: int | None


def recall(*, actor: Actor, **args: Unpack[RecallArgs]) -> dict[str, Any]:
    """Pick the level from the arguments given, exactly as ``recall_cloud_skill`` does."""
    answer = _route(actor=actor, encode=False, **args)
    assert isinstance(answer, dict)
    return answer


def recall_encoded(*, actor: Actor, **args: Unpack[RecallArgs]) -> Encoded:
    """``recall`` as JSON bytes plus its ETag — for REST, where the bytes of an immutable
    answer come from a cache instead of being encoded again on every request."""
    answer = _route(actor=actor, encode=True, **args)
    assert isinstance(answer, Encoded)
    return answer


def _encoded(kind: str, document: dict[str, Any]) -> Encoded:
    """The REST body and its ETag: a digest of the very bytes sent (SPEC §5), so anything in
    the answer that can change (``state``, ``resolved_by``, a rendered body …) changes the tag,
    and a 304 never stands for an answer other than the one the client holds."""
    body = encode_json(document)
    return Encoded(kind, body, f'"{hashlib.sha256(body).hexdigest()}"')


def _encoded_once(key: str, kind: str, document: Callable[[], dict[str, Any]]) -> Encoded:
    """``_encoded`` of a document fully determined by ``key``, kept per process."""
    answer = local_cache.get(key)
    if answer is None:
        answer = _encoded(kind, document())
        local_cache.set(key, answer, len(answer.body) + 200)
    assert isinstance(answer, Encoded)
    return answer


def _route(
    *,
    actor: Actor,
    encode: bool,
    query: str | None = None,
    slug: str | None = None,
    workspace: str | None = None,
    revision_id: str | None = None,
    resource: str | None = None,
    arguments: str | None = None,
    fallback: str | None = None,
    limit: int | None = None,
) -> dict[str, Any] | Encoded:
    require_scope(actor, "skills:read")
    # An empty optional parameter means "not given", as ``?workspace=`` does in a query string;
    # REST and MCP both rely on this one rule.
    workspace, revision_id, fallback = workspace or None, revision_id or None, fallback or None
    if resource is not None:
        if not revision_id:
            raise errors.RevisionIdRequired(
                "Resource recall (Level 2) needs the revision_id from the Level 1 answer, so "
                "every resource comes from the revision you read.",
                details={"resource": resource},
            )
        if query is not None:
            raise _conflicting("query", "resource")
        return _resource(
            actor=actor,
            slug=slug,
            workspace=workspace,
            revision_id=revision_id,
            resource=resource,
            encode=encode,
        )
    if slug is not None:
        if query is not None:
            raise _conflicting("query", "slug")
        return _root(
            actor=actor,
            slug=slug,
            workspace=workspace,
            revision_id=revision_id,
            arguments=arguments,
            fallback=fallback or "latest",
            encode=encode,
        )
    if query is not None:
        answer = recall_search(
            actor=actor,
            query=query,
            workspace=workspace,
            limit=SEARCH_DEFAULT_LIMIT if limit is None else limit,
        )
        return Encoded("search", encode_json(answer), None) if encode else answer
    raise errors.ValidationFailed(
        "Say what to recall: 'query' to search (Level 0), 'slug' for a skill's instructions "
        "(Level 1), or 'slug', 'revision_id' and 'resource' for one file (Level 2).",
        details={"field": "query"},
    )


def recall_search(
    *, actor: Actor, query: str, workspace: str | None = None, limit: int = SEARCH_DEFAULT_LIMIT
) -> dict[str, Any]:
    """Level 0: light descriptors of the best matching skills, best first."""
    require_scope(actor, "skills:read")
    text = query.strip() if isinstance(query, str) else ""
    if not text:
        raise errors.ValidationFailed(
            "The search query is empty; give a few words describing the task.",
            details={"field": "query"},
        )
    if len(text) > QUERY_MAX_LENGTH:
        raise errors.ValidationFailed(
            f"The search query is limited to {QUERY_MAX_LENGTH} characters.",
            details={"field": "query", "limit": QUERY_MAX_LENGTH},
        )
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= SEARCH_MAX_LIMIT:
        raise errors.ValidationFailed(
            f"limit must be a whole number from 1 to {SEARCH_MAX_LIMIT}.",
            details={"field": "limit", "limit": SEARCH_MAX_LIMIT},
        )
    scope_ws = workspace_for(actor, workspace) if workspace else None
    results = search_skills(actor=actor, text=text, workspace=scope_ws, limit=limit)
    if not results and scope_ws is None:
        require_enabled_workspace(actor)
    return {"kind": "search", "data": {"results": results}}


def _root(
    *,
    actor: Actor,
    slug: str,
    workspace: str | None,
    revision_id: str | None,
    arguments: str | None,
    fallback: str,
    encode: bool,
) -> dict[str, Any] | Encoded:
    if fallback not in FALLBACKS:
        raise errors.ValidationFailed(
            "fallback must be 'latest' or 'none'.", details={"field": "fallback"}
        )
    if arguments is not None and (
        not isinstance(arguments, str) or len(arguments) > ARGUMENTS_MAX_LENGTH
    ):
        raise errors.ValidationFailed(
            f"arguments must be text of at most {ARGUMENTS_MAX_LENGTH:,} characters.",
            details={"field": "arguments", "limit": ARGUMENTS_MAX_LENGTH},
        )
    ws_slug, bare = _split_slug(slug, workspace)
    if revision_id:
        target = _resolve_pinned(actor, revision_id, bare, ws_slug)
        resolved_by = "pinned"
    else:
        target, resolved_by = _cached_resolution(
            ("slug", *_identity(actor), bare, ws_slug, fallback),
            lambda: _resolve_by_slug(actor, bare, ws_slug, fallback),
        )
    content = _root_content(target.revision_id, target.revision_pk)
    if not encode:
        return _root_document(target, content, resolved_by, arguments)
    if arguments is not None:
        return _encoded("root", _root_document(target, content, resolved_by, arguments))
    # Everything in this body is fixed by these values: encode it once per process.
    key = ":".join(
        ("rootjson", target.revision_id, target.state, resolved_by, target.workspace, target.slug)
    )
    return _encoded_once(key, "root", lambda: _root_document(target, content, resolved_by, None))


def _root_document(
    target: _Target, content: RootContent, resolved_by: str, arguments: str | None
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "skill_id": target.skill_id,
        "slug": target.slug,
        "workspace": target.workspace,
        "name": content.name,
        "description": content.description,
        "revision_id": target.revision_id,
        "revision_number": content.revision_number,
        "state": target.state,
        "canonical_hash": content.canonical_hash,
        "frontmatter": json.loads(content.frontmatter_json),
        "instruction_body": content.instruction_body,
        "resolved_by": resolved_by,
        "resources": [
            {
                "logical_path": path,
                "type": ctype,
                "content_hash": sha,
                "size": size,
                "media_type": media_type,
            }
            for path, ctype, sha, size, media_type in content.resources
        ],
    }
    if arguments is not None:
        names = data["frontmatter"].get("argument-names")
        data["rendered_body"] = render_body(
            content.instruction_body,
            arguments=arguments,
            argument_names=names if isinstance(names, list) else (),
            context={
                "XMEMO_SKILL_ID": target.skill_id,
                "XMEMO_REVISION_ID": target.revision_id,
                "XMEMO_WORKSPACE": target.workspace,
            },
        )
    return {"kind": "root", "data": data}


def _resource(
    *,
    actor: Actor,
    revision_id: str | None,
    resource: str,
    slug: str | None,
    workspace: str | None,
    encode: bool,
) -> dict[str, Any] | Encoded:
    if not revision_id:
        raise errors.RevisionIdRequired(details={"resource": resource})
    if not isinstance(resource, str) or not resource or len(resource) > 1024:
        raise errors.ValidationFailed(
            "resource must be the logical_path of one of the revision's resources.",
            details={"field": "resource"},
        )
    ws_slug, bare = _split_slug(slug, workspace) if slug else (workspace or None, None)
    target = _resolve_pinned(actor, revision_id, bare, ws_slug)
    component = component_content(target.revision_id, target.revision_pk, resource)
    if component is None:
        raise errors.NotFound(
            f"Revision '{revision_id}' has no resource '{resource}'.",
            details={"revision_id": revision_id, "resource": resource},
        )
    if not encode:
        return _resource_document(target, component)
    key = f"resjson:{target.revision_id}:{component.content_hash}:{_path_key(resource)}"
    return _encoded_once(key, "resource", lambda: _resource_document(target, component))


def _resource_document(target: _Target, component: ComponentContent) -> dict[str, Any]:
    return {
        "kind": "resource",
        "data": {
            "skill_id": target.skill_id,
            "revision_id": target.revision_id,
            "logical_path": component.logical_path,
            "type": component.type,
            "content_hash": component.content_hash,
            "size": component.size,
            "media_type": component.media_type,
            "encoding": component.encoding,
            "content": component.content,
        },
    }


def _path_key(path: str) -> str:
    return hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()[:32]


# --- resolution: which revision, and may this actor read it -------------------------------------

# Resolutions are mutable facts (what is published, who is a member), so they are cached only
# under the generation of ``infra.invalidation``, which moves with every committed change
# anywhere. Failures are never cached.
_RESOLUTIONS: dict[tuple[Any, ...], tuple[int, Any]] = {}
_RESOLUTIONS_MAX = 50_000
T = TypeVar("T")


def _identity(actor: Actor) -> tuple[Any, ...]:
    """What tenancy depends on: the user, the token's workspace restriction and (a workspace's
    token) role, system actors."""
    token_ws = actor.token.workspace_id if actor.token is not None else None
    role = actor.token.role if actor.token is not None else ""
    return (actor.system, actor.user.pk if actor.user is not None else None, token_ws, role)


def _cached_resolution(key: tuple[Any, ...], compute: Callable[[], T]) -> T:
    generation = invalidation.current()
    if generation is None:
        return compute()
    hit = _RESOLUTIONS.get(key)
    if hit is not None and hit[0] == generation:
        cached: T = hit[1]
        return cached
    value = compute()
    if invalidation.current() == generation:  # nothing changed while it was computed
        if len(_RESOLUTIONS) >= _RESOLUTIONS_MAX:
            _RESOLUTIONS.clear()
        _RESOLUTIONS[key] = (generation, value)
    return value


def clear_resolutions() -> None:
    _RESOLUTIONS.clear()


@dataclass(frozen=True)
class _Target:
    revision_pk: int
    revision_id: str
    state: str
    skill_id: str
    slug: str
    workspace: str


def _conflicting(a: str, b: str) -> errors.ValidationFailed:
    return errors.ValidationFailed(
        f"Give either '{a}' or '{b}', not both: one recall answers one level.",
        details={"fields": [a, b]},
    )


def _split_slug(slug: str | None, workspace: str | None) -> tuple[str | None, str]:
    """``WS/SLUG`` or ``SLUG`` (+ optional ``workspace``) → (workspace slug or None, slug)."""
    if not isinstance(slug, str) or not slug:
        raise errors.ValidationFailed("slug must not be empty.", details={"field": "slug"})
    ws_slug = workspace or None
    bare = slug
    if "/" in slug:
        qualifier, _, bare = slug.partition("/")
        if not qualifier or (ws_slug is not None and ws_slug != qualifier):
            raise errors.ValidationFailed(
                f"The slug '{slug}' names a different workspace than workspace='{ws_slug}'."
                if qualifier
                else "A qualified slug looks like WORKSPACE/SLUG.",
                details={"field": "slug"},
            )
        ws_slug = qualifier
    validate_slug(bare)
    return ws_slug, bare


def _not_found(slug: str, ws_slug: str | None) -> errors.NotFound:
    shown = f"{ws_slug}/{slug}" if ws_slug else slug
    return errors.NotFound(
        f"No skill '{shown}' in the workspaces this token can read.",
        details={"slug": slug, **({"workspace": ws_slug} if ws_slug else {})},
    )


def _resolve_by_slug(
    actor: Actor, slug: str, ws_slug: str | None, fallback: str
) -> tuple[_Target, str]:
    access_sql, access_params = readable_workspace_sql(actor, "s.workspace_id")
    sql = (
        "SELECT s.skill_id, s.status, w.slug, w.cloud_skills_enabled, w.kind,"  # noqa: S608 - table and column names only; values are parameters
        " p.id, p.revision_id, c.id, c.revision_id, c.state"
        f" FROM {_SKILL} s"
        f" JOIN {_WS} w ON w.id = s.workspace_id"
        f" LEFT JOIN {_REV} p ON p.id = s.published_revision_id"
        f" LEFT JOIN {_REV} c ON c.id = s.current_revision_id"
        f" WHERE s.slug = %s AND {access_sql}"
    )
    params: list[Any] = [slug, *access_params]
    if ws_slug is not None:
        sql += " AND w.slug = %s"
        params.append(ws_slug)
    rows = db.fetch_all(sql, params)
    # Archived skills are left out of recall by slug (SPEC §4); pinned reads still work.
    rows = [row for row in rows if row[1] == Skill.Status.ACTIVE]
    enabled = [row for row in rows if row[3]]
    if not enabled:
        if rows:
            raise errors.FeatureDisabled(details={"workspace": rows[0][2]})
        if ws_slug is None:
            require_enabled_workspace(actor)
        else:
            workspace_for(actor, ws_slug)  # switched off: 403; not the caller's: 404
        raise _not_found(slug, ws_slug)
    if len(enabled) > 1:
        candidates = sorted(f"{row[2]}/{slug}" for row in enabled)
        raise errors.AmbiguousSlug(
            f"'{slug}' exists in {len(candidates)} workspaces you can read; ask again with one "
            f"of: {', '.join(candidates)}.",
            details={
                "slug": slug,
                "candidates": [
                    {"workspace": row[2], "skill_id": row[0], "qualified_slug": f"{row[2]}/{slug}"}
                    for row in sorted(enabled, key=lambda r: r[2])
                ],
            },
        )
    skill_id, _, ws, _, kind, pub_pk, pub_id, cur_pk, cur_id, cur_state = enabled[0]
    if pub_pk is not None:
        return _Target(pub_pk, pub_id, PUBLISHED, skill_id, slug, ws), "published"
    served_unreviewed = kind in LATEST_FALLBACK_KINDS
    if fallback == "latest" and served_unreviewed and cur_pk is not None:
        # The skill's current revision is its newest non-deprecated one (services.skills).
        return _Target(cur_pk, cur_id, cur_state, skill_id, slug, ws), "latest_fallback"
    if not served_unreviewed:
        hint = (
            " and a team workspace serves only reviewed revisions by slug: get one approved, or"
            " read a draft or proposal pinned by its revision_id."
        )
    elif fallback == "none":
        hint = "; ask for fallback=latest to read its newest draft, or publish one."
    else:
        hint = " and no draft to fall back to."
    raise errors.NoPublishedRevision(
        f"'{ws}/{slug}' has no published revision{hint}",
        details={"skill_id": skill_id, "slug": slug, "workspace": ws, "fallback": fallback},
    )


def _resolve_pinned(
    actor: Actor, revision_id: str, slug: str | None, ws_slug: str | None
) -> _Target:
    return _cached_resolution(
        ("rev", *_identity(actor), revision_id, slug, ws_slug),
        lambda: _resolve_pinned_uncached(actor, revision_id, slug, ws_slug),
    )


def _resolve_pinned_uncached(
    actor: Actor, revision_id: str, slug: str | None, ws_slug: str | None
) -> _Target:
    if not isinstance(revision_id, str) or len(revision_id) > 64:
        raise errors.ValidationFailed("revision_id is not valid.", details={"field": "revision_id"})
    access_sql, access_params = readable_workspace_sql(actor, "r.workspace_id")
    rows = db.fetch_all(
        "SELECT r.id, r.revision_id, r.state, s.skill_id, s.slug, w.slug, w.cloud_skills_enabled"  # noqa: S608 - fixed SQL
        f" FROM {_REV} r"
        f" JOIN {_SKILL} s ON s.id = r.skill_id"
        f" JOIN {_WS} w ON w.id = r.workspace_id"
        f" WHERE r.revision_id = %s AND {access_sql}",
        [revision_id, *access_params],
    )
    if not rows:
        raise errors.NotFound(
            f"Revision '{revision_id}' was not found.", details={"revision_id": revision_id}
        )
    rev_pk, rev_id, state, skill_id, skill_slug, ws, enabled = rows[0]
    if (slug is not None and slug != skill_slug) or (ws_slug is not None and ws_slug != ws):
        raise errors.NotFound(
            f"Revision '{revision_id}' is not a revision of '{ws_slug + '/' if ws_slug else ''}"
            f"{slug or skill_slug}'.",
            details={"revision_id": revision_id, "slug": slug},
        )
    if not enabled:
        raise errors.FeatureDisabled(details={"workspace": ws})
    return _Target(rev_pk, rev_id, state, skill_id, skill_slug, ws)


# --- immutable content, cached by revision id ---------------------------------------------------


@dataclass(frozen=True)
class RootContent:
    revision_number: int
    name: str
    description: str
    canonical_hash: str
    frontmatter_json: str  # kept as text so no caller can mutate the cached value
    instruction_body: str
    resources: tuple[tuple[str, str, str, int, str], ...]


@dataclass(frozen=True)
class ComponentContent:
    logical_path: str
    type: str
    content_hash: str
    size: int
    media_type: str
    encoding: str
    content: str
    raw: bytes


def _root_content(revision_id: str, revision_pk: int) -> RootContent:
    def load() -> RootContent:
        rev = (
            SkillRevision.objects.filter(pk=revision_pk)
            .values_list(
                "revision_number",
                "name",
                "description",
                "canonical_hash",
                "frontmatter",
                "instruction_body",
            )
            .get()
        )
        resources = tuple(
            SkillComponent.objects.filter(revision_id=revision_pk)
            .order_by("logical_path")
            .values_list("logical_path", "type", "content_hash", "size", "media_type")
        )
        return RootContent(
            revision_number=rev[0],
            name=rev[1],
            description=rev[2],
            canonical_hash=rev[3],
            frontmatter_json=json.dumps(rev[4] or {}, ensure_ascii=False),
            instruction_body=rev[5],
            resources=resources,
        )

    content = cached_immutable(
        f"root:{revision_id}", load, encode=_root_encode, decode=_root_decode
    )
    assert content is not None
    return content


def _root_encode(content: RootContent) -> bytes:
    return encode_json(astuple(content))


def _root_decode(payload: bytes) -> RootContent:
    number, name, description, canonical, frontmatter_json, body, resources = json.loads(payload)
    return RootContent(
        number, name, description, canonical, frontmatter_json, body, tuple(map(tuple, resources))
    )


def component_content(revision_id: str, revision_pk: int, path: str) -> ComponentContent | None:
    """One component of a revision the caller has already been allowed to read."""

    def load() -> ComponentContent | None:
        row = (
            SkillComponent.objects.filter(revision_id=revision_pk, logical_path=path)
            .values_list("logical_path", "type", "content_hash", "size", "media_type", "blob__data")
            .first()
        )
        return None if row is None else _component(*row[:5], bytes(row[5]))

    return cached_immutable(
        f"comp:{revision_id}:{_path_key(path)}",
        load,
        encode=_component_encode,
        decode=_component_decode,
    )


def _component(
    logical_path: str, ctype: str, content_hash: str, size: int, media_type: str, raw: bytes
) -> ComponentContent:
    text = is_text(raw)
    return ComponentContent(
        logical_path=logical_path,
        type=ctype,
        content_hash=content_hash,
        size=size,
        media_type=media_type,
        encoding="utf-8" if text else "base64",
        content=raw.decode("utf-8") if text else base64.b64encode(raw).decode("ascii"),
        raw=raw,
    )


def _component_encode(component: ComponentContent) -> bytes:
    """The metadata as one JSON line (JSON escapes every newline), then the raw bytes."""
    header = [
        component.logical_path,
        component.type,
        component.content_hash,
        component.size,
        component.media_type,
    ]
    return encode_json(header) + b"\n" + component.raw


def _component_decode(payload: bytes) -> ComponentContent:
    header, _, raw = payload.partition(b"\n")
    logical_path, ctype, content_hash, size, media_type = json.loads(header)
    return _component(logical_path, ctype, content_hash, size, media_type, raw)
