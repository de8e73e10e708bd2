"""The answers of the three levels as the documents REST and MCP send."""

from __future__ import annotations

import json

from skills_app import errors
from skills_app.access import Actor, require_enabled_workspace, require_scope, workspace_for
from skills_app.domain import shapes
from skills_app.domain.context_cost import answer_member_tokens
from skills_app.domain.render import render
from skills_app.selectors.recall.arguments import (
    QUERY_MAX_LENGTH,
    SEARCH_DEFAULT_LIMIT,
    SEARCH_MAX_LIMIT,
)
from skills_app.selectors.recall.content import ComponentContent, RootContent
from skills_app.selectors.recall.resolution import _Target
from skills_app.selectors.search import search_skills


def recall_search(
    *, actor: Actor, query: str, workspace: str | None = None, limit: int = SEARCH_DEFAULT_LIMIT
) -> shapes.RecallSearch:
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


def _root_document(
    target: _Target,
    content: RootContent,
    resolved_by: str,
    arguments: str | None,
    scan: shapes.JSONObject,
) -> shapes.RecallRoot:
    data: shapes.RootData = {
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
        "labels": list(target.labels),
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
        "scan": scan,
        "approx_tokens": content.approx_tokens,
    }
    if arguments is not None:
        names = data["frontmatter"].get("argument-names")
        rendered = render(
            content.instruction_body,
            arguments=arguments,
            argument_names=names if isinstance(names, list) else (),
            context={
                "XMEMO_SKILL_ID": target.skill_id,
                "XMEMO_REVISION_ID": target.revision_id,
                "XMEMO_WORKSPACE": target.workspace,
            },
        )
        # The estimate describes the answer sent: with arguments, the rendered body too.
        data["approx_tokens"] += answer_member_tokens("rendered_body", rendered.text)
        data["rendered_body"] = rendered.text
        if rendered.warnings:
            warnings = list(rendered.warnings)
            data["approx_tokens"] += answer_member_tokens("render_warnings", warnings)
            data["render_warnings"] = warnings
    return {"kind": "root", "data": data}


def _resource_document(target: _Target, component: ComponentContent) -> shapes.RecallResource:
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
