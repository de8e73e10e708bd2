"""Skills as commands and their components as resources, for MCP prompts and resources
(docs/contract.md §18).

Both read exactly what Level 1 and Level 2 serve, through the same functions: a prompt's text is
``recall(slug=…, arguments=…)``'s ``rendered_body`` and a resource's bytes are
``recall(…, resource=…)``'s content, so they cannot drift from what an agent recalls. The
listings pick the same revision Level 1 serves by slug: the published one, or — in a personal
workspace only — the latest non-deprecated one (``Skill.current_revision``), never an
unreviewed revision of a team.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from skills_app import errors
from skills_app.access import Actor, readable_workspaces, require_scope
from skills_app.domain import shapes
from skills_app.domain.commands import (
    argument_string,
    declared_arguments,
    is_command,
    unknown_arguments,
)
from skills_app.domain.lifecycle import LATEST_FALLBACK_KINDS
from skills_app.models import Skill, Workspace
from skills_app.selectors.recall import recall

SCHEME = "skill://"
RESOURCES_PAGE = 100


def _served(workspaces: QuerySet[Workspace]) -> QuerySet[Skill]:
    """Active skills of ``workspaces`` (those an actor reads) that Level 1 serves by slug."""
    return Skill.objects.filter(workspace__in=workspaces, status=Skill.Status.ACTIVE).filter(
        Q(published_revision__isnull=False)
        | Q(workspace__kind__in=LATEST_FALLBACK_KINDS, current_revision__isnull=False)
    )


def _ambiguous(workspaces: QuerySet[Workspace], slugs: set[str]) -> set[str]:
    """The slugs readable in more than one workspace: bare, Level 1 answers AMBIGUOUS_SLUG."""
    rows = (
        Skill.objects.filter(
            workspace__in=workspaces,
            status=Skill.Status.ACTIVE,
            slug__in=slugs,
        )
        .values("slug")
        .annotate(n=Count("workspace", distinct=True))
        .filter(n__gt=1)
    )
    return {row["slug"] for row in rows}


# --- prompts -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    name: str  # the slug, or WS/SLUG where the slug is readable in more than one workspace
    title: str
    description: str
    arguments: tuple[str, ...]  # declared names, or () for the one optional ARGUMENTS


def command_list(*, actor: Actor) -> list[Command]:
    """Every command (``invoke.user: true`` skill) the actor may run, by name."""
    require_scope(actor, "skills:read")
    readable = readable_workspaces(actor)
    skills = list(
        _served(readable)
        .filter(user_invocable=True)
        .select_related("workspace", "current_revision")
        .only(
            "slug",
            "workspace__slug",
            "current_revision__name",
            "current_revision__description",
            "current_revision__frontmatter",
        )
        .order_by("slug", "workspace__slug")
    )
    ambiguous = _ambiguous(readable, {skill.slug for skill in skills})
    commands = []
    for skill in skills:
        revision = skill.current_revision
        assert revision is not None  # _served
        if not is_command(revision.frontmatter):  # the flag is a hint; the revision decides
            continue
        commands.append(
            Command(
                name=f"{skill.workspace.slug}/{skill.slug}"
                if skill.slug in ambiguous
                else skill.slug,
                title=revision.name,
                description=revision.description,
                arguments=declared_arguments(revision.frontmatter),
            )
        )
    return commands


def command_name(*, actor: Actor, skill: Skill) -> str | None:
    """The prompt name MCP clients show for ``skill`` (as ``command_list`` names it), or None
    when it is no command the actor could run now (no ``invoke.user``, or nothing served)."""
    return command_name_in(skill, readable_workspaces(actor))


def command_name_in(skill: Skill, workspaces: QuerySet[Workspace]) -> str | None:
    """``command_name`` for an actor who reads ``workspaces`` (``access.readable_workspaces``)."""
    if not skill.user_invocable or not _served(workspaces).filter(pk=skill.pk).exists():
        return None
    ambiguous = _ambiguous(workspaces, {skill.slug})
    return f"{skill.workspace.slug}/{skill.slug}" if ambiguous else skill.slug


def command_render(
    *, actor: Actor, name: str, arguments: dict[str, str] | None
) -> tuple[shapes.RootData, str]:
    """A command's Level 1 answer rendered with its argument string, and that text."""
    answer = recall(actor=actor, slug=name, fallback="latest")
    assert answer["kind"] == "root"
    data = answer["data"]
    if not is_command(data["frontmatter"]):
        raise errors.NotFound(
            f"'{name}' is not a command: its revision does not say invoke: {{user: true}}.",
            details={"prompt": name},
        )
    declared = declared_arguments(data["frontmatter"])
    unknown = unknown_arguments(declared, arguments)
    if unknown:
        raise errors.ValidationFailed(
            f"'{name}' takes no argument {', '.join(unknown)}.",
            details={"arguments": unknown, "accepted": list(declared) or ["ARGUMENTS"]},
        )
    answer = recall(
        actor=actor,
        slug=name,
        revision_id=data["revision_id"],
        arguments=argument_string(declared, arguments),
    )
    assert answer["kind"] == "root"
    return answer["data"], answer["data"]["rendered_body"]
