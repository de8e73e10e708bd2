"""Which level a recall asks for, and the answer as a document or as encoded REST bytes."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import NamedTuple, Unpack

from django.conf import settings

from skills_app import errors
from skills_app.access import Actor, require_scope
from skills_app.domain import shapes
from skills_app.domain.json_bytes import encode_json
from skills_app.domain.labels import validate_label_name
from skills_app.infra import requestctx, usage
from skills_app.infra.cache import local_cache
from skills_app.infra.metrics import RECALLS
from skills_app.selectors.recall.arguments import (
    ARGUMENTS_MAX_LENGTH,
    FALLBACKS,
    SEARCH_DEFAULT_LIMIT,
    RecallArgs,
    _conflicting,
    _split_slug,
)
from skills_app.selectors.recall.content import _path_key, _root_content, component_content
from skills_app.selectors.recall.documents import _resource_document, _root_document, recall_search
from skills_app.selectors.recall.resolution import (
    _cached_resolution,
    _identity,
    _keyed,
    _resolve_by_slug,
    _resolve_pinned,
    _root_key,
    _Target,
    served_scan,
)


class Served(NamedTuple):
    """A Level 1 or Level 2 answer sent: what counting it again takes (``served_again``)."""

    revision_pk: int
    level: int
    workspace: str | None


class Encoded(NamedTuple):
    """A recall answer as the REST body: the same JSON ``recall`` returns, already encoded.
    ``served`` is set for an answer that changes only with the database (Level 1 and 2)."""

    kind: str
    body: bytes
    etag: str | None
    served: Served | None = None


def recall(*, actor: Actor, **args: Unpack[RecallArgs]) -> shapes.RecallAnswer:
    """Pick the level from the arguments given, exactly as ``recall_cloud_skill`` does."""
    answer = _route(actor=actor, encode=False, **args)
    assert not isinstance(answer, Encoded)
    return answer


def recall_encoded(*, actor: Actor, **args: Unpack[RecallArgs]) -> Encoded:
    """``recall`` as JSON bytes plus its ETag — for REST, where the bytes of an immutable
    answer come from a cache instead of being encoded again on every request."""
    answer = _route(actor=actor, encode=True, **args)
    assert isinstance(answer, Encoded)
    return answer


def _encoded(kind: str, document: shapes.RecallAnswer) -> Encoded:
    """The REST body and its ETag: a digest of the very bytes sent (docs/contract.md §5), so
    anything in the answer that can change (``state``, ``resolved_by``, a rendered body …)
    changes the tag, and a 304 never stands for an answer other than the one the client holds."""
    body = encode_json(document)
    return Encoded(kind, body, f'"{hashlib.sha256(body).hexdigest()}"')


def _encoded_once(key: str, kind: str, document: Callable[[], shapes.RecallAnswer]) -> Encoded:
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
    label: str | None = None,
    resource: str | None = None,
    arguments: str | None = None,
    fallback: str | None = None,
    limit: int | None = None,
) -> shapes.RecallAnswer | Encoded:
    require_scope(actor, "skills:read")
    # An empty optional parameter means "not given", as ``?workspace=`` does in a query string;
    # REST and MCP both rely on this one rule.
    workspace, revision_id, fallback = workspace or None, revision_id or None, fallback or None
    label = label or None
    if label is not None and (revision_id is not None or resource is not None):
        raise _conflicting("label", "revision_id" if revision_id is not None else "resource")
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
            label=label,
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


def _served(actor: Actor, target: _Target, level: int) -> Served:
    served = Served(target.revision_pk, level, target.workspace)
    served_again(actor=actor, served=served)
    return served


def served_again(*, actor: Actor, served: Served) -> None:
    """A Level 1 or Level 2 answer is on its way, whichever door sends it (a REST 304 too: the
    client holds the answer and uses it; an answer a door keeps and sends again too): counted
    for the skill's usage and the metrics, and the request log names its workspace. Counting is
    in memory (``infra/usage.py``)."""
    if settings.XMEMO_USAGE:
        client = actor.token.name if actor.token is not None else actor.via
        usage.count(revision_pk=served.revision_pk, client=client, level=served.level)
    RECALLS.labels(str(served.level), actor.via).inc()
    requestctx.note(workspace=served.workspace)


def _root(
    *,
    actor: Actor,
    slug: str,
    workspace: str | None,
    revision_id: str | None,
    label: str | None,
    arguments: str | None,
    fallback: str,
    encode: bool,
) -> shapes.RecallAnswer | Encoded:
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
        key = _root_key(target, resolved_by)
    elif label is not None:
        validate_label_name(label, field="label")
        target, resolved_by, key = _cached_resolution(
            ("label", *_identity(actor), bare, ws_slug, label),
            lambda: _keyed(*_resolve_by_slug(actor, bare, ws_slug, fallback, label)),
        )
    else:
        target, resolved_by, key = _cached_resolution(
            ("slug", *_identity(actor), bare, ws_slug, fallback),
            lambda: _keyed(*_resolve_by_slug(actor, bare, ws_slug, fallback)),
        )

    def document(given: str | None) -> shapes.RecallAnswer:
        # The content is read only here: a body encoded before is served without it.
        content = _root_content(target.revision_id, target.revision_pk)
        return _root_document(target, content, resolved_by, given, served_scan(target))

    if not encode:
        answer = document(arguments)
        _served(actor, target, 1)  # after the rendering, which can refuse (RENDERED_TOO_LARGE)
        return answer
    if arguments is not None:
        encoded = _encoded("root", document(arguments))
    else:
        encoded = _encoded_once(key, "root", lambda: document(None))
    return Encoded(encoded.kind, encoded.body, encoded.etag, _served(actor, target, 1))


def _resource(
    *,
    actor: Actor,
    revision_id: str | None,
    resource: str,
    slug: str | None,
    workspace: str | None,
    encode: bool,
) -> shapes.RecallAnswer | Encoded:
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
    served = _served(actor, target, 2)
    if not encode:
        return _resource_document(target, component)
    key = f"resjson:{target.revision_id}:{component.content_hash}:{_path_key(resource)}"
    encoded = _encoded_once(key, "resource", lambda: _resource_document(target, component))
    return Encoded(encoded.kind, encoded.body, encoded.etag, served)
