"""MCP prompts and resources (docs/contract.md §18): the skills that are commands, and the
components of the skills a caller reads.

Like the tool bodies, these are synchronous functions of the caller (run in the database thread)
that call the core and shape its answer for MCP: a prompt's text is Level 1's ``rendered_body``
(``selectors.commands``), a resource's content is Level 2's. Which profiles see them is the
contract's ``surfaces`` (``profiles.profile_sees``); a profile that does not see one gets empty
lists and "unknown" for every name, as for a tool it does not see. Each request passes the REST
rate limit, as a tool call does.
"""

from __future__ import annotations

import mcp_types as types

from skills_app.access import Actor
from skills_app.domain.commands import ARGUMENTS
from skills_app.gateway.ratelimit import check_rate
from skills_app.profiles import profile_sees
from skills_app.selectors.commands import command_list, command_render, resource_list, resource_read

ARGUMENTS_HELP = "Everything after the command, as one string ($ARGUMENTS; $1, $2 … by word)."
TEMPLATES = (
    types.ResourceTemplate(
        name="skill-component",
        title="A component of a skill, as Level 1 serves it",
        uri_template="skill://{workspace}/{slug}/{+path}",
        description="One attached file of the revision recall_cloud_skill {slug} answers now "
        "(its bytes are Level 2's).",
    ),
    types.ResourceTemplate(
        name="skill-component-pinned",
        title="A component of one pinned revision",
        uri_template="skill://{workspace}/{slug}@{revision_id}/{+path}",
        description="One attached file of exactly that revision: never changes.",
    ),
)


def sees(actor: Actor, surface: str) -> bool:
    profile = actor.token.client_profile if actor.token is not None else ""
    return profile_sees(profile, surface)


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


def resources_list(*, actor: Actor, cursor: str | None) -> types.ListResourcesResult:
    check_rate(actor.token, actor.user)
    page = resource_list(actor=actor, cursor=cursor)
    return types.ListResourcesResult(
        resources=[
            types.Resource(
                uri=row["uri"],
                name=row["name"],
                description=f"{row['type']} of {row['name'].rsplit('/', 1)[0]}",
                mime_type=row["media_type"],
                size=row["size"],
            )
            for row in page.results
        ],
        next_cursor=page.next_cursor,
    )


def resource_get(*, actor: Actor, uri: str) -> types.ReadResourceResult:
    check_rate(actor.token, actor.user)
    data, _ = resource_read(actor=actor, uri=uri)
    contents: types.TextResourceContents | types.BlobResourceContents
    if data["encoding"] == "base64":
        contents = types.BlobResourceContents(
            uri=uri, mime_type=data["media_type"], blob=data["content"]
        )
    else:
        contents = types.TextResourceContents(
            uri=uri, mime_type=data["media_type"], text=data["content"]
        )
    return types.ReadResourceResult(contents=[contents])
