"""MCP prompts, resources and the Skills extension (docs/contract.md §18, §20): the skills that
are commands, the files of the skills a caller reads, and those skills as entries and folders.

Like the tool bodies, synchronous functions of the caller (run in the database thread) that
call the core and shape its answer: a prompt is Level 1's ``rendered_body``, a component
Level 2's content, SKILL.md the capsule's (``selectors.recall.entries``). A profile that does
not see a surface (``profiles.profile_sees``) gets empty lists and "unknown" for every name;
every request passes the REST rate limit, as a tool call does."""

from __future__ import annotations

from typing import Any

import mcp_types as types

from skills_app import errors
from skills_app.access import Actor
from skills_app.domain.commands import ARGUMENTS
from skills_app.domain.skill_uri import SkillUri, parse_skill_uri, skill_md_uri, skill_uri
from skills_app.gateway.ratelimit import check_rate
from skills_app.mcp_profiles import (
    SKILLS_EXTENSION,
    profile_extensions,
    profile_sees,
    published_only,
)
from skills_app.selectors.commands import command_list, command_render
from skills_app.selectors.recall.entries import (
    SKILL_MD_MIME,
    component_read,
    directory_read,
    entries,
    listing,
    skill_entry,
    skill_md_read,
)

ARGUMENTS_HELP = "Everything after the command, as one string ($ARGUMENTS; $1, $2 … by word)."
TEMPLATES = (
    types.ResourceTemplate(
        name="skill-file",
        title="A file of a skill, as Level 1 serves it",
        uri_template="skill://{workspace}/{slug}/{+path}",
        description="SKILL.md or one attached file of the revision recall_cloud_skill {slug} "
        "answers now (a component's bytes are Level 2's).",
    ),
    types.ResourceTemplate(
        name="skill-file-pinned",
        title="A file of one pinned revision",
        uri_template="skill://{workspace}/{revision_id}/{slug}/{+path}",
        description="SKILL.md or one attached file of exactly that revision: never changes.",
    ),
)


def profile_of(actor: Actor) -> str:
    return actor.token.client_profile if actor.token is not None else ""


def sees(actor: Actor, surface: str) -> bool:
    """Whether the caller's profile sees ``surface``: prompts, resources, or skills (the
    Skills extension, declared to it)."""
    if surface == "skills":
        return SKILLS_EXTENSION in profile_extensions(profile_of(actor))
    return profile_sees(profile_of(actor), surface)


def prompts_list(*, actor: Actor) -> types.ListPromptsResult:
    check_rate(actor.token, actor.user)
    return types.ListPromptsResult(
        prompts=[
            types.Prompt(
                name=command.name,
                title=command.title,
                description=command.description,
                arguments=[
                    types.PromptArgument(name=name, required=False) for name in command.arguments
                ]
                or [
                    types.PromptArgument(name=ARGUMENTS, description=ARGUMENTS_HELP, required=False)
                ],
            )
            for command in command_list(actor=actor)
        ]
    )


def prompt_get(
    *, actor: Actor, name: str, arguments: dict[str, str] | None
) -> types.GetPromptResult:
    check_rate(actor.token, actor.user)
    data, text = command_render(actor=actor, name=name, arguments=arguments)
    return types.GetPromptResult(
        description=data["description"],
        messages=[types.PromptMessage(role="user", content=types.TextContent(text=text))],
    )


def published(actor: Actor) -> bool:
    """Whether the caller's profile reads published revisions only (§20)."""
    return published_only(profile_of(actor))


def _ref(uri: str) -> SkillUri:
    ref = parse_skill_uri(uri)
    if ref is None:
        raise errors.NotFound(
            "A skill resource URI looks like skill://WORKSPACE/SLUG/PATH, or "
            "skill://WORKSPACE/REVISION_ID/SLUG/PATH pinned.",
            details={"uri": uri},
        )
    return ref


def resources_list(*, actor: Actor, cursor: str | None) -> types.ListResourcesResult:
    """SKILL.md and every component of the skills Level 1 serves, skill by skill."""
    check_rate(actor.token, actor.user)
    listed, next_cursor = listing(
        actor=actor, cursor=cursor, skills_list=False, published_only=published(actor)
    )
    resources: list[types.Resource] = []
    for item in listed:
        ws, slug, files = item.target.workspace, item.target.slug, item.files
        resources.append(
            types.Resource(
                uri=skill_md_uri(ws, slug),
                name=slug,
                title=f"{ws}/{slug}",
                description=files.description,
                mime_type=SKILL_MD_MIME,
                size=files.skill_md_size,
            )
        )
        resources.extend(
            types.Resource(
                uri=skill_uri(ws, slug, path),
                name=f"{ws}/{slug}/{path}",
                description=f"{ctype} of {ws}/{slug}",
                mime_type=media_type,
                size=size,
            )
            for path, ctype, _sha, size, media_type in files.components
        )
    return types.ListResourcesResult(resources=resources, next_cursor=next_cursor)


def resource_get(*, actor: Actor, uri: str) -> types.ReadResourceResult:
    """One file: SKILL.md (the capsule's bytes) or a component (Level 2's)."""
    check_rate(actor.token, actor.user)
    ref = _ref(uri)
    contents: types.TextResourceContents | types.BlobResourceContents
    if ref.is_skill_md:
        raw, meta, _ = skill_md_read(actor=actor, ref=ref, published_only=published(actor))
        contents = types.TextResourceContents.model_validate(
            {"uri": uri, "mimeType": SKILL_MD_MIME, "text": raw.decode("utf-8"), "_meta": meta}
        )
        return types.ReadResourceResult(contents=[contents])
    data = component_read(actor=actor, ref=ref, published_only=published(actor))
    if data["encoding"] == "base64":
        contents = types.BlobResourceContents(
            uri=uri, mime_type=data["media_type"], blob=data["content"]
        )
    else:
        contents = types.TextResourceContents(
            uri=uri, mime_type=data["media_type"], text=data["content"]
        )
    return types.ReadResourceResult(contents=[contents])


# --- the Skills extension (§20) ------------------------------------------------------------------


def skills_list(*, actor: Actor, cursor: str | None) -> dict[str, Any]:
    """``skills/list``: one page of entries."""
    check_rate(actor.token, actor.user)
    listed, next_cursor = listing(
        actor=actor, cursor=cursor, skills_list=True, published_only=published(actor)
    )
    result: dict[str, Any] = {"skills": entries(listed)}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


def skill_get(*, actor: Actor, uri: str) -> dict[str, Any]:
    """``skills/get``: the entry of one SKILL.md URI, listed or pinned."""
    check_rate(actor.token, actor.user)
    return {"skill": skill_entry(actor=actor, ref=_ref(uri), published_only=published(actor))}


def directory_get(*, actor: Actor, uri: str, cursor: str | None) -> dict[str, Any]:
    """``resources/directory/read``: the direct children of a skill's folder."""
    check_rate(actor.token, actor.user)
    rows, next_cursor = directory_read(
        actor=actor, ref=_ref(uri), cursor=cursor, published_only=published(actor)
    )
    result: dict[str, Any] = {"resources": rows}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result
