"""Reads of skills, revisions, components and diffs (docs/contract.md §7 and §10), as objects
and typed values: the JSON shapes of skills and revisions are ``gateway.shapes``'s."""

from __future__ import annotations

import json
from dataclasses import dataclass

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery

from skills_app import errors
from skills_app.access import (
    Actor,
    readable_workspaces,
    require_enabled_workspace,
    require_scope,
    revision_for,
    revisions_for,
    skill_for,
    skills_for,
    workspace_for,
)
from skills_app.domain import lifecycle, shapes
from skills_app.domain.bundle import ComponentEntry
from skills_app.domain.diff import RevisionSnapshot, diff_snapshots, snapshot_of
from skills_app.domain.json_bytes import encode_json
from skills_app.infra.cache import cached_immutable
from skills_app.models import (
    RevisionScan,
    Skill,
    SkillComponent,
    SkillRevision,
    UsageDay,
    Workspace,
)
from skills_app.selectors.pagination import Rows, paginate_rows
from skills_app.selectors.recall.content import ComponentContent, component_content
from skills_app.selectors.reviews import revision_approvals
from skills_app.selectors.revisions import revision_bundle
from skills_app.selectors.search import search_skills

STATES = lifecycle.STATES
STATUSES = tuple(Skill.Status.values)
SEARCH_LIMIT = 50  # the Level 0 maximum

# Revision columns a list never needs (the big ones).
_HEAVY_REVISION_FIELDS = ("instruction_body", "frontmatter")


# --- skills -------------------------------------------------------------------------------------


def _skill_queryset(qs: QuerySet[Skill]) -> QuerySet[Skill]:
    deferred = ["search_body", "search_terms", "search_lexemes"]
    for pointer in ("latest_revision", "published_revision"):
        deferred += [f"{pointer}__{field}" for field in _HEAVY_REVISION_FIELDS]
    return (
        qs.select_related("workspace", "latest_revision", "published_revision")
        .defer(*deferred)
        .annotate(
            awaiting_review=Count(
                "revisions", filter=Q(revisions__state=SkillRevision.State.PROPOSED)
            )
        )
    )


def _skills_filtered(
    qs: QuerySet[Skill], *, state: str | None, status: str | None
) -> QuerySet[Skill]:
    """``qs`` narrowed to skills with a revision in ``state`` and of ``status`` (each optional),
    the filters validated once for every door."""
    if state:
        if state not in STATES:
            raise errors.ValidationFailed(
                f"state must be one of {', '.join(STATES)}.", details={"field": "state"}
            )
        # EXISTS, not a join + DISTINCT: frontmatter is json, which has no equality operator.
        qs = qs.filter(Exists(SkillRevision.objects.filter(skill_id=OuterRef("pk"), state=state)))
    if status:
        if status not in STATUSES:
            raise errors.ValidationFailed(
                f"status must be one of {', '.join(STATUSES)}.", details={"field": "status"}
            )
        qs = qs.filter(status=status)
    return qs


def skill_rows(
    *,
    actor: Actor,
    workspace: str,
    query: str = "",
    state: str | None = None,
    status: str | None = None,
    sort: str = "slug",
) -> list[Skill]:
    """The skills of one workspace as the console lists them: filtered like ``skill_list``,
    ranked by Level 0 search when ``query`` is given (else by slug, or with ``sort="recalled"``
    the most recently recalled first and never-recalled last), each with ``has_proposal``,
    ``last_recalled_at``, its latest revision's ``scan_verdict`` (None while pending) and
    ``scan_overridden``, and its latest and published revisions loaded."""
    require_scope(actor, "skills:read")
    ws = workspace_for(actor, workspace, require_enabled=False)
    skills = _skills_filtered(skills_for(actor).filter(workspace=ws), state=state, status=status)
    proposed = SkillRevision.objects.filter(
        skill=OuterRef("pk"), state=SkillRevision.State.PROPOSED
    )
    last_recall = (
        UsageDay.objects.filter(revision__skill=OuterRef("pk"))
        .order_by("-last_recalled_at")
        .values("last_recalled_at")[:1]
    )
    latest_scan = RevisionScan.objects.filter(revision_id=OuterRef("latest_revision_id"))
    skills = skills.annotate(
        has_proposal=Exists(proposed),
        last_recalled_at=Subquery(last_recall),
        scan_verdict=Subquery(latest_scan.values("verdict")[:1]),
        scan_overridden=Exists(latest_scan.filter(override_at__isnull=False)),
    ).select_related("latest_revision", "published_revision")
    if not query:
        if sort == "recalled":
            return list(skills.order_by(F("last_recalled_at").desc(nulls_last=True), "slug"))
        return list(skills.order_by("slug"))
    ranked = [
        result["skill_id"]
        for result in search_skills(actor=actor, text=query, workspace=ws, limit=SEARCH_LIMIT)
    ]
    by_id = {skill.skill_id: skill for skill in skills.filter(skill_id__in=ranked)}
    return [by_id[skill_id] for skill_id in ranked if skill_id in by_id]


def revisions_proposed(*, actor: Actor, skill: Skill) -> list[SkillRevision]:
    """The proposals of a skill the actor reads, oldest first (the review banner)."""
    require_scope(actor, "skills:read")
    return list(
        SkillRevision.objects.filter(
            skill=skill_for(actor, skill.skill_id), state=SkillRevision.State.PROPOSED
        )
        .select_related("author", "author_token")
        .order_by("revision_number")
    )


def skill_choices(*, actor: Actor, workspace: Workspace) -> list[tuple[str, str]]:
    """(skill_id, slug) of every skill of ``workspace`` the actor reads, by slug (a picker)."""
    require_scope(actor, "skills:read")
    skills = skills_for(actor).filter(workspace=workspace).order_by("slug")
    return list(skills.values_list("skill_id", "slug"))


def skill_list(
    *,
    actor: Actor,
    workspace: str | None = None,
    state: str | None = None,
    status: str | None = None,
    cursor: str | None = None,
    limit: int = 50,
) -> Rows[Skill]:
    """Skills of every readable workspace (or one); ``state`` = has a revision in that state."""
    require_scope(actor, "skills:read")
    if workspace:
        qs = Skill.objects.filter(workspace=workspace_for(actor, workspace))
    else:
        qs = Skill.objects.filter(workspace__in=readable_workspaces(actor))
    qs = _skills_filtered(qs, state=state, status=status)
    page = paginate_rows(
        _skill_queryset(qs),
        kind="skills",
        order=[("workspace__slug", False), ("slug", False)],
        cursor=cursor,
        limit=limit,
    )
    if not page.results and not workspace:
        require_enabled_workspace(actor)
    return page


def skill_detail(*, actor: Actor, skill_id: str) -> Skill:
    require_scope(actor, "skills:read")
    return skill_loaded(skill_for(actor, skill_id))


def skill_loaded(skill: Skill) -> Skill:
    """A skill already fetched through ``access`` (after a write, too) with what its answer
    shows: workspace, latest and published revisions, ``awaiting_review``."""
    return _skill_queryset(Skill.objects.filter(pk=skill.pk)).get()


# --- revisions ----------------------------------------------------------------------------------


# Who wrote and who reviewed a revision: a person or a workspace token (``author_label``).
PEOPLE = ("author", "reviewed_by", "author_token", "reviewed_by_token")


def _revision_queryset(qs: QuerySet[SkillRevision]) -> QuerySet[SkillRevision]:
    return qs.select_related("skill", "workspace", "parent", *PEOPLE).only(
        *[
            f.name
            for f in SkillRevision._meta.concrete_fields
            if f.name not in _HEAVY_REVISION_FIELDS
        ],
        "skill__skill_id",
        "skill__slug",
        "workspace__slug",
        "workspace__kind",
        "parent__revision_id",
        "author__username",
        "reviewed_by__username",
        "author_token__name",
        "reviewed_by_token__name",
    )


def revision_timeline(*, actor: Actor, skill: Skill) -> list[SkillRevision]:
    """Every revision of ``skill`` (fetched through ``access``), newest first, with author and
    reviewer loaded: a skill's timeline and the diff's pickers."""
    require_scope(actor, "skills:read")
    return list(
        revisions_for(actor)
        .filter(skill=skill)
        .select_related(*PEOPLE)
        .order_by("-revision_number")
    )


def revisions_of(skill: Skill) -> list[SkillRevision]:
    """``revision_timeline`` of a skill fetched by the gate in this same call; the skill's own
    pointers (latest, published, current) and each revision's ``skill`` are answered from the
    list, with no query of their own."""
    revisions = list(skill.revisions.select_related(*PEOPLE).order_by("-revision_number"))
    by_pk = {revision.pk: revision for revision in revisions}
    for pointer in ("latest_revision", "published_revision", "current_revision"):
        found = by_pk.get(getattr(skill, f"{pointer}_id"))
        if found is not None:
            setattr(skill, pointer, found)
    return revisions


def revision_manifest(revision: SkillRevision) -> list[ComponentEntry]:
    """The manifest of a revision fetched through ``access``, by path."""
    return [
        ComponentEntry(*row)
        for row in SkillComponent.objects.filter(revision=revision)
        .order_by("logical_path")
        .values_list("logical_path", "type", "content_hash", "size", "media_type")
    ]


def revision_components(*, actor: Actor, revision: SkillRevision) -> list[ComponentEntry]:
    """The manifest of a revision fetched through ``access``, by path."""
    require_scope(actor, "skills:read")
    return revision_manifest(revision)


def revision_list(
    *,
    actor: Actor,
    skill_id: str,
    state: str | None = None,
    cursor: str | None = None,
    limit: int = 50,
) -> Rows[SkillRevision]:
    require_scope(actor, "skills:read")
    skill = skill_for(actor, skill_id)
    qs = SkillRevision.objects.filter(skill=skill)
    if state:
        if state not in STATES:
            raise errors.ValidationFailed(
                f"state must be one of {', '.join(STATES)}.", details={"field": "state"}
            )
        qs = qs.filter(state=state)
    return paginate_rows(
        _revision_queryset(qs),
        kind=f"revisions:{skill.skill_id}",
        order=[("revision_number", True)],
        cursor=cursor,
        limit=limit,
    )


@dataclass(frozen=True)
class RevisionDetail:
    """A revision with everything its detail answer shows."""

    revision: SkillRevision  # skill, workspace, parent, people and answered revision loaded
    components: list[ComponentEntry]
    approvals: list[shapes.Approval]


def revision_detail_of(revision: SkillRevision) -> RevisionDetail:
    """The detail of a revision already fetched through ``access`` (after a write, too)."""
    rev = (
        SkillRevision.objects.select_related(
            "skill", "workspace", "parent", "answers_revision", *PEOPLE
        )
        .filter(pk=revision.pk)
        .get()
    )
    return RevisionDetail(
        revision=rev, components=revision_manifest(rev), approvals=revision_approvals(rev)
    )


def revision_detail(*, actor: Actor, revision_id: str) -> RevisionDetail:
    require_scope(actor, "skills:read")
    return revision_detail_of(revision_for(actor, revision_id))


def component_file(*, actor: Actor, revision_id: str, logical_path: str) -> ComponentContent:
    """One component's bytes and metadata (``GET …/components/{path}``)."""
    require_scope(actor, "skills:read")
    return revision_component(
        actor=actor, revision=revision_for(actor, revision_id), logical_path=logical_path
    )


def revision_component(
    *, actor: Actor, revision: SkillRevision, logical_path: str
) -> ComponentContent:
    """One component's bytes and metadata, of a revision fetched through ``access``."""
    require_scope(actor, "skills:read")
    component = component_content(revision.revision_id, revision.pk, logical_path)
    if component is None:
        raise errors.NotFound(
            f"Revision '{revision.revision_id}' has no component '{logical_path}'.",
            details={"revision_id": revision.revision_id, "logical_path": logical_path},
        )
    return component


# --- diff (docs/contract.md §10) ------------------------------------------------------------------


def _snapshot(revision: SkillRevision) -> RevisionSnapshot:
    return snapshot_of(
        revision_bundle(revision),
        revision_id=revision.revision_id,
        number=revision.revision_number,
    )


def skill_diff(
    *, actor: Actor, skill_id: str, from_revision_id: str | None, to_revision_id: str | None
) -> shapes.SkillDiff:
    """Word-level diff between two revisions of one skill.

    ``to`` defaults to the latest revision; ``from`` to the published one (what agents get
    now), or, when ``to`` is the published one or there is none, to ``to``'s parent.
    """
    require_scope(actor, "skills:read")
    skill = skill_for(actor, skill_id)
    revisions = SkillRevision.objects.filter(skill=skill)

    def pick(revision_id: str, field: str) -> SkillRevision:
        found = revisions.filter(revision_id=revision_id).first()
        if found is None:
            raise errors.NotFound(
                f"Revision '{revision_id}' is not a revision of skill '{skill.skill_id}'.",
                details={"field": field, "revision_id": revision_id, "skill_id": skill.skill_id},
            )
        return found

    if to_revision_id:
        new = pick(to_revision_id, "to")
    else:
        latest = revisions.order_by("-revision_number").first()
        if latest is None:
            raise errors.NotFound("The skill has no revisions.", details={"skill_id": skill_id})
        new = latest
    if from_revision_id:
        old = pick(from_revision_id, "from")
    else:
        published = skill.published_revision_id
        if published is not None and published != new.pk:
            old = revisions.get(pk=published)
        elif new.parent_id is not None and revisions.filter(pk=new.parent_id).exists():
            old = revisions.get(pk=new.parent_id)
        else:
            raise errors.ValidationFailed(
                "Nothing to compare with: give 'from' (a revision_id of this skill).",
                details={"field": "from"},
            )
    return {"skill_id": skill.skill_id, **revision_pair_diff(old, new)}


def revision_pair_diff(old: SkillRevision, new: SkillRevision) -> shapes.RevisionPairDiff:
    """The diff of two stored revisions, computed once per ordered pair: revisions are
    immutable and their ids never reused, so the pair of ids is the whole key (the caller has
    already resolved both revisions for the reader). A ``truncated`` answer is kept too: the
    same pair always answers the same diff."""
    result: shapes.RevisionPairDiff | None = cached_immutable(
        f"diff:{old.revision_id}:{new.revision_id}",
        lambda: diff_snapshots(_snapshot(old), _snapshot(new)),
        encode=encode_json,
        decode=_diff_decode,
    )
    assert result is not None
    return result


def _diff_decode(payload: bytes) -> shapes.RevisionPairDiff:
    diff: shapes.RevisionPairDiff = json.loads(payload)
    return diff
