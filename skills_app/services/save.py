"""A save (docs/contract.md §6) from a payload the door has read (``gateway.save_payload``),
shared by ``POST /v1/skills/save`` and MCP's ``save_cloud_skill``, and its dry run, the lint of
§17 (``POST /v1/skills/lint``)."""

from __future__ import annotations

from dataclasses import dataclass

from skills_app.access import Actor, readable_workspaces, require_scope, workspace_for
from skills_app.domain import shapes
from skills_app.domain.bundle import SavePayload
from skills_app.domain.lint import Problem, agent_skill_advice, approx_tokens
from skills_app.domain.scan import scan_bundle
from skills_app.errors import ValidationFailed
from skills_app.models import Membership, SkillRevision, Workspace
from skills_app.services.evals import lint_triggers
from skills_app.services.skills import save_problems, skill_save


@dataclass(frozen=True)
class SaveOutcome:
    """What a save did (docs/contract.md §6) and the lint's advice on it (§17); the doors answer
    it through ``gateway.shapes.save_as_dict``."""

    revision: SkillRevision
    created: bool
    warnings: list[Problem]


def save_from_payload(*, actor: Actor, read: SavePayload) -> SaveOutcome:
    """Save ``read`` (a payload the door checked, ``gateway.save_payload``) and return what the
    save did; raises whatever ``skill_save`` raises."""
    require_scope(actor, "skills:write")
    result = skill_save(
        actor=actor,
        workspace=workspace_for(actor, read.workspace or ""),
        slug=read.slug,
        bundle=read.bundle,
        intent=read.intent,
        base_revision_id=read.base_revision_id,
        message=read.message,
        acknowledge_secrets=read.acknowledge_secrets,
    )
    return SaveOutcome(
        revision=result.revision,
        created=result.created,
        warnings=agent_skill_advice(read.bundle, slug=read.slug),
    )


def _personal_workspace(actor: Actor) -> Workspace:
    """The workspace a lint that names none checks against: the caller's personal one (or the
    one workspace its token is bound to)."""
    readable = readable_workspaces(actor, include_disabled=True)
    if actor.token is not None and actor.token.workspace_id is not None:
        workspace = readable.first()
    elif actor.user is not None:
        workspace = readable.filter(
            kind=Workspace.Kind.PERSONAL,
            memberships__user=actor.user,
            memberships__role=Membership.Role.OWNER,
        ).first()
    else:
        workspace = None
    if workspace is None:
        raise ValidationFailed(
            "'workspace' is required: this token has no personal workspace.",
            details={"field": "workspace"},
        )
    return workspace


def lint_from_payload(*, actor: Actor, read: SavePayload) -> shapes.Lint:
    """``POST /v1/skills/lint`` (docs/contract.md §17): every rule the save would enforce on
    ``payload`` (the first error of each rule), the Agent Skills advice, the estimate of what
    each level costs an agent, and the scan's verdict and findings (§21). Nothing is stored."""
    require_scope(actor, "skills:write")
    workspace = (
        workspace_for(actor, read.workspace, require_enabled=False)
        if read.workspace is not None
        else _personal_workspace(actor)
    )
    problems = save_problems(
        actor=actor,
        workspace=workspace,
        slug=read.slug,
        bundle=read.bundle,
        intent=read.intent,
        message=read.message,
        acknowledge_secrets=read.acknowledge_secrets,
    )
    scan = scan_bundle(slug=read.slug, bundle=read.bundle)
    return {
        "errors": [
            {
                "code": problem.code,
                "field": str(problem.details.get("field") or problem.details.get("path") or ""),
                "message": problem.message,
            }
            for problem in problems
        ],
        "warnings": agent_skill_advice(read.bundle, slug=read.slug),
        "approx_tokens": approx_tokens(read.bundle, slug=read.slug),
        # What the scan of the revision a save would store finds (§21), verdict and all.
        "scan": {"verdict": scan.verdict, "findings": [f.as_dict() for f in scan.findings]},
        # Checked only as a save would store it: never a slug or text the save refuses.
        "triggers": (
            None
            if problems
            else lint_triggers(workspace=workspace, slug=read.slug, bundle=read.bundle)
        ),
    }
