"""The write side of skills: save, lifecycle transitions, restore, archive and delete.

Every function here is one transaction that locks the skill row first (``select_for_update``),
so concurrent saves get gap-free revision numbers and concurrent publishes leave exactly one
published revision. The database constraints and triggers back each rule up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from skills_app import errors
from skills_app.access import Actor, require_role, require_scope
from skills_app.domain import lifecycle
from skills_app.domain.bundle import ComponentData, SkillBundle
from skills_app.domain.canonical import canonical_hash, sha256_hex
from skills_app.domain.commands import is_command
from skills_app.domain.context_cost import revision_tokens
from skills_app.domain.labels import is_rejected
from skills_app.domain.limits import bundle_checks, collect_problems, validate_slug
from skills_app.domain.scan import Finding, live_secrets
from skills_app.domain.search_text import search_columns
from skills_app.models import Blob, Job, Skill, SkillComponent, SkillRevision, Workspace
from skills_app.selectors.revisions import revision_bundle
from skills_app.services.audit import audit_record
from skills_app.services.embeddings import embedding_wanted
from skills_app.services.evals import evals_wanted
from skills_app.services.labels import labels_drop_rejected
from skills_app.services.notifications import lifecycle_notify
from skills_app.services.reviews import approval_record, sign_off_record, thread_comment_record
from skills_app.services.scans import scan_ensure, scan_gate, scan_wanted

State = SkillRevision.State


@dataclass(frozen=True)
class SaveResult:
    revision: SkillRevision
    created: bool


def _lock_skill(skill_pk: int) -> Skill:
    return Skill.objects.select_for_update().select_related("workspace").get(pk=skill_pk)


def _lock_or_create_skill(workspace: Workspace, slug: str) -> tuple[Skill, bool]:
    skill = Skill.objects.select_for_update().filter(workspace=workspace, slug=slug).first()
    if skill is not None:
        return skill, False
    try:
        with transaction.atomic():
            return Skill.objects.create(workspace=workspace, slug=slug), True
    except IntegrityError:
        # A concurrent first save created it; wait for its lock like everyone else.
        return Skill.objects.select_for_update().get(workspace=workspace, slug=slug), False


def _component_rows(revision: SkillRevision) -> list[SkillComponent]:
    return list(SkillComponent.objects.filter(revision=revision).select_related("blob"))


def _store_blobs(components: Sequence[ComponentData]) -> dict[str, Blob]:
    """Content-addressed: identical bytes are stored once, across every revision."""
    by_hash = {sha256_hex(c.content): c.content for c in components}
    if not by_hash:
        return {}
    Blob.objects.bulk_create(
        [Blob(sha256=h, size=len(data), data=data) for h, data in by_hash.items()],
        ignore_conflicts=True,
    )
    return {
        b.sha256: b for b in Blob.objects.filter(sha256__in=by_hash).only("id", "sha256", "size")
    }


def _refresh_pointers(skill: Skill) -> None:
    """Recompute the denormalized pointers and search columns from the revisions.

    Every change that can move a skill's current revision ends here (saves, imports, restores,
    lifecycle actions), so this is where Level 0's vector of it is asked for: after commit, a
    worker embeds it if it has none yet (``embeddings``)."""
    revisions = SkillRevision.objects.filter(skill=skill)
    latest = revisions.order_by("-revision_number").first()
    published = revisions.filter(state=State.PUBLISHED).first()
    current = (
        published or revisions.exclude(state=State.DEPRECATED).order_by("-revision_number").first()
    )
    skill.latest_revision = latest
    skill.published_revision = published
    skill.current_revision = current
    skill.revision_count = latest.revision_number if latest else 0
    if current is not None:
        for column, value in search_columns(
            name=current.name,
            slug=skill.slug,
            description=current.description,
            body=current.instruction_body,
        ).items():
            setattr(skill, column, value)
        invoke = (current.frontmatter or {}).get("invoke")
        skill.model_invocable = not (isinstance(invoke, dict) and invoke.get("model") is False)
        skill.user_invocable = is_command(current.frontmatter)
        embedding_wanted(current)
    else:
        skill.search_name = skill.search_description = skill.search_body = ""
        skill.search_terms, skill.search_lexemes = {}, ""
        skill.model_invocable = True
        skill.user_invocable = False
    skill.save(
        update_fields=[
            "latest_revision",
            "published_revision",
            "current_revision",
            "revision_count",
            "search_name",
            "search_description",
            "search_body",
            "search_terms",
            "search_lexemes",
            "model_invocable",
            "user_invocable",
            "updated_at",
        ]
    )
    evals_wanted(skill)


def _set_state(
    revision: SkillRevision,
    *,
    actor: Actor,
    to_state: str,
    comment: str | None = None,
    review: bool = False,
) -> None:
    """Move one revision's state; publishing supersedes the previous published revision."""
    now = timezone.now()
    if to_state == State.PUBLISHED:
        previous = (
            SkillRevision.objects.filter(skill_id=revision.skill_id, state=State.PUBLISHED)
            .exclude(pk=revision.pk)
            .first()
        )
        if previous is not None:
            SkillRevision.objects.filter(pk=previous.pk).update(
                state=State.DEPRECATED, state_changed_at=now
            )
            audit_record(
                actor=actor,
                workspace=revision.workspace,
                action="skills.revision.deprecate",
                target_type="revision",
                target_id=previous.revision_id,
                data={
                    "superseded_by": revision.revision_id,
                    "revision_number": previous.revision_number,
                },
            )
    fields: dict[str, Any] = {"state": to_state, "state_changed_at": now}
    if review:
        fields.update(
            reviewed_by=actor.person,
            reviewed_by_token=actor.workspace_token,
            reviewed_at=now,
            review_comment=comment or "",
        )
    SkillRevision.objects.filter(pk=revision.pk).update(**fields)
    for key, value in fields.items():
        setattr(revision, key, value)


def _role_for_lifecycle(actor: Actor, workspace: Workspace) -> str | None:
    role = actor.role_in(workspace)
    if role is None:
        raise errors.NotFound("Not found.", details={"workspace": workspace.slug})
    return role


def _save_action(intent: str) -> str:
    return lifecycle.SAVE_PUBLISH if intent == "publish" else lifecycle.SAVE_DRAFT


@dataclass
class _SaveTarget:
    state: str = ""


def _check_intent(intent: str) -> None:
    if intent not in ("draft", "publish"):
        raise errors.ValidationFailed(
            "intent must be 'draft' or 'publish'.", details={"field": "intent"}
        )


def _check_enabled(workspace: Workspace) -> None:
    if not workspace.cloud_skills_enabled:
        raise errors.FeatureDisabled(details={"workspace": workspace.slug})


def _check_message(message: str) -> None:
    if len(message) > 2000:
        raise errors.ValidationFailed(
            "message is limited to 2,000 characters.", details={"field": "message"}
        )


def _check_secrets(found: list[Finding], acknowledged: bool) -> None:
    """Push protection: a live secret is refused unless the request acknowledges it."""
    if found and not acknowledged:
        first = found[0]
        where = ", ".join(f"{f.path} line {f.line}" for f in found[:5])
        raise errors.SecretDetected(
            f"The content holds a secret ({first.message.split(' (')[0]}) at {where}. Remove it"
            " (and revoke it: it has been seen), or send acknowledge_secrets: true to store it.",
            details={
                "path": first.path,
                "line": first.line,
                "secrets": [{"path": f.path, "line": f.line, "rule_id": f.rule_id} for f in found],
            },
        )


def _save_rules(
    *,
    actor: Actor,
    workspace: Workspace,
    slug: str,
    bundle: SkillBundle,
    intent: str,
    message: str,
    target: _SaveTarget,
    secrets: list[Finding] | None = None,
    acknowledge_secrets: bool = False,
) -> Iterator[Callable[[], object]]:
    """Every rule a save checks before it stores anything, in the order it reports them; the
    lifecycle rule records the state the new revision takes in ``target``."""
    yield partial(_check_intent, intent)
    yield partial(_check_enabled, workspace)

    def lifecycle_rule() -> None:
        target.state = lifecycle.check_transition(
            action=_save_action(intent),
            state=None,
            workspace_kind=workspace.kind,
            role=_role_for_lifecycle(actor, workspace),
            is_author=True,
        )

    yield lifecycle_rule
    yield partial(validate_slug, slug)
    yield partial(_check_message, message)
    yield from bundle_checks(bundle)
    found = live_secrets(slug=slug, bundle=bundle) if secrets is None else secrets
    yield partial(_check_secrets, found, acknowledge_secrets)


def save_problems(
    *,
    actor: Actor,
    workspace: Workspace,
    slug: str,
    bundle: SkillBundle,
    intent: str,
    message: str = "",
    acknowledge_secrets: bool = False,
) -> list[errors.XmemoError]:
    """What ``skill_save`` would refuse, every rule's error (docs/contract.md §17 lint)."""
    require_scope(actor, lifecycle.transition_for(_save_action(intent)).scope)
    rules = _save_rules(
        actor=actor,
        workspace=workspace,
        slug=slug,
        bundle=bundle,
        intent=intent,
        message=message,
        target=_SaveTarget(),
        acknowledge_secrets=acknowledge_secrets,
    )
    return collect_problems(rules)


def skill_save(
    *,
    actor: Actor,
    workspace: Workspace,
    slug: str,
    bundle: SkillBundle,
    intent: str = "draft",
    base_revision_id: str | None = None,
    message: str = "",
    expect_new: bool = False,
    acknowledge_secrets: bool = False,
) -> SaveResult:
    """Store ``bundle`` as the skill's next revision (creating the skill on first save).

    Identical content to the latest revision creates nothing (``created=False``); with intent
    ``publish`` that revision is then published (personal) or proposed (team) if its state
    allows. ``base_revision_id`` that is not the latest revision raises ``Conflict``.
    ``expect_new`` (a "new skill" form) only creates: a skill of that slug raises ``SlugTaken``
    naming it, so a new skill never becomes a revision of an existing one. A live secret in the
    content raises ``SecretDetected`` unless ``acknowledge_secrets`` (then it is audited).
    """
    require_scope(actor, lifecycle.transition_for(_save_action(intent)).scope)
    target = _SaveTarget()
    secrets = live_secrets(slug=slug, bundle=bundle)
    for rule in _save_rules(
        actor=actor,
        workspace=workspace,
        slug=slug,
        bundle=bundle,
        intent=intent,
        message=message,
        target=target,
        secrets=secrets,
        acknowledge_secrets=acknowledge_secrets,
    ):
        rule()

    with transaction.atomic():
        skill, created = _lock_or_create_skill(workspace, slug)
        if expect_new and not created:
            raise errors.SlugTaken(
                f"A skill '{slug}' already exists in this workspace; open it to save a new "
                "revision, or choose another slug.",
                details={"field": "slug", "slug": slug, "skill_id": skill.skill_id},
            )
        latest = skill.latest_revision
        if base_revision_id is not None and (
            latest is None or latest.revision_id != base_revision_id
        ):
            raise errors.Conflict(
                "Someone saved a newer revision since yours was based on it; rebase on the latest.",
                details={
                    "base_revision_id": base_revision_id,
                    "latest_revision_id": latest.revision_id if latest else None,
                    "latest_revision_number": latest.revision_number if latest else None,
                },
            )
        saved = _save_locked(
            actor=actor,
            skill=skill,
            latest=latest,
            bundle=bundle,
            target_state=target.state,
            intent=intent,
            message=message,
        )
        if secrets:
            _secrets_acknowledged(actor=actor, revision=saved.revision, secrets=secrets)
        return saved


def _secrets_acknowledged(*, actor: Actor, revision: SkillRevision, secrets: list[Finding]) -> None:
    """The audit entry of a save that stored live secrets on purpose (where, never the value)."""
    audit_record(
        actor=actor,
        workspace=revision.workspace,
        action="skills.revision.secrets_acknowledge",
        target_type="revision",
        target_id=revision.revision_id,
        data={"secrets": [{"path": f.path, "line": f.line, "rule_id": f.rule_id} for f in secrets]},
    )


def _save_locked(
    *,
    actor: Actor,
    skill: Skill,
    latest: SkillRevision | None,
    bundle: SkillBundle,
    target_state: str,
    intent: str,
    message: str,
    source_revision: SkillRevision | None = None,
) -> SaveResult:
    workspace = skill.workspace
    carried: list[SkillComponent] = []
    if bundle.components is None:
        base = source_revision or latest
        carried = _component_rows(base) if base is not None else []
        hash_rows = [(c.logical_path, c.type, c.content_hash) for c in carried]
        new_components: Sequence[ComponentData] = ()
        manifest = [(*row, c.size, c.media_type) for row, c in zip(hash_rows, carried, strict=True)]
    else:
        new_components = bundle.components
        hash_rows = [(c.logical_path, c.type, sha256_hex(c.content)) for c in new_components]
        manifest = [
            (*row, len(c.content), c.media_type)
            for row, c in zip(hash_rows, new_components, strict=True)
        ]
    digest = canonical_hash(
        name=bundle.name,
        description=bundle.description,
        frontmatter=bundle.frontmatter,
        instruction_body=bundle.instruction_body,
        components=hash_rows,
    )
    if latest is not None and latest.canonical_hash == digest:
        if intent == "publish":
            _publish_intent_on_existing(actor=actor, revision=latest)
        return SaveResult(revision=latest, created=False)

    number = skill.revision_count + 1
    revision = SkillRevision.objects.create(
        skill=skill,
        workspace=workspace,
        revision_number=number,
        state=State.DRAFT if target_state == State.PUBLISHED else target_state,
        name=bundle.name,
        description=bundle.description,
        frontmatter=bundle.frontmatter,
        instruction_body=bundle.instruction_body,
        canonical_hash=digest,
        approx_tokens=revision_tokens(
            name=bundle.name,
            description=bundle.description,
            frontmatter=bundle.frontmatter,
            instruction_body=bundle.instruction_body,
            resources=manifest,
        ),
        parent=latest,
        author=actor.person,
        author_token=actor.workspace_token,
        message=message,
        source=bundle.source,
        source_ref=bundle.source_ref,
        state_changed_at=timezone.now(),
        answers_revision=_review_answered(latest),
    )
    if carried:
        SkillComponent.objects.bulk_create(
            [
                SkillComponent(
                    revision=revision,
                    logical_path=c.logical_path,
                    type=c.type,
                    blob_id=c.blob_id,
                    content_hash=c.content_hash,
                    size=c.size,
                    media_type=c.media_type,
                )
                for c in carried
            ]
        )
    elif new_components:
        blobs = _store_blobs(new_components)
        SkillComponent.objects.bulk_create(
            [
                SkillComponent(
                    revision=revision,
                    logical_path=c.logical_path,
                    type=c.type,
                    blob=blobs[sha],
                    content_hash=sha,
                    size=len(c.content),
                    media_type=c.media_type,
                )
                for c, (_, _, sha) in zip(new_components, hash_rows, strict=True)
            ]
        )
    # From here on the database refuses any change to this revision's component rows.
    SkillRevision.objects.filter(pk=revision.pk).update(components_lock="sealed")
    scan_wanted([revision.revision_id])
    if target_state == State.PUBLISHED:
        _set_state(revision, actor=actor, to_state=State.PUBLISHED)
    audit_record(
        actor=actor,
        workspace=workspace,
        action="skills.revision.create",
        target_type="revision",
        target_id=revision.revision_id,
        data={
            "skill_id": skill.skill_id,
            "slug": skill.slug,
            "revision_number": number,
            "state": revision.state,
            "source": bundle.source,
            "source_ref": bundle.source_ref,
            "canonical_hash": digest,
        },
    )
    _refresh_pointers(skill)
    lifecycle_notify(actor=actor, revision=revision, action="save")
    return SaveResult(revision=revision, created=True)


def _review_answered(latest: SkillRevision | None) -> SkillRevision | None:
    """The revision a reviewer sent back (changes requested or rejected) that a new save
    answers: the latest revision, when it is a draft with a review decision."""
    if latest is not None and latest.state == State.DRAFT and latest.reviewed_by_id is not None:
        return latest
    return None


def _publish_intent_on_existing(*, actor: Actor, revision: SkillRevision) -> None:
    """Intent ``publish`` on unchanged content: publish (personal) or propose (team) if allowed."""
    action = lifecycle.publish_action(revision.workspace.kind)
    try:
        _transition_locked(actor=actor, revision=revision, action=action, comment="")
    except (errors.InvalidTransition, errors.PermissionDenied, errors.ScanBlocked):
        return


# The actions a ``block`` scan stops (docs/contract.md §21), and how the refusal names them.
_SCAN_GATED = {"approve": "approved", "publish": "published"}


def _transition_check(*, actor: Actor, revision: SkillRevision, action: str, comment: str) -> str:
    """The lifecycle table's answer for ``action`` on ``revision`` as things stand: the state
    it moves to, or the table's refusal."""
    workspace = revision.workspace
    return lifecycle.check_transition(
        action=action,
        state=revision.state,
        workspace_kind=workspace.kind,
        role=_role_for_lifecycle(actor, workspace),
        is_author=actor.is_author_of(revision),
        require_distinct_reviewer=workspace.reviewer_must_differ,
        comment=comment,
    )


def _transition_locked(*, actor: Actor, revision: SkillRevision, action: str, comment: str) -> None:
    workspace = revision.workspace
    target = _transition_check(actor=actor, revision=revision, action=action, comment=comment)
    if action in _SCAN_GATED:
        scan_gate(revision=revision, what=_SCAN_GATED[action])
    from_state = revision.state
    review = lifecycle.transition_for(action).review_decision
    approvals = approval_record(actor=actor, revision=revision) if action == "approve" else 0
    if action == "approve" and approvals < workspace.required_approvals:
        target = from_state  # recorded; published when the last required approval arrives
    else:
        _set_state(revision, actor=actor, to_state=target, comment=comment, review=review)
    if is_rejected(state=revision.state, reviewed=review):
        labels_drop_rejected(actor=actor, revision=revision)
    if review and comment.strip():
        thread_comment_record(actor=actor, revision=revision, body=comment, action=action)
    audit_record(
        actor=actor,
        workspace=workspace,
        action=f"skills.revision.{action}",
        target_type="revision",
        target_id=revision.revision_id,
        data={
            "skill_id": revision.skill.skill_id,
            "revision_number": revision.revision_number,
            "from": from_state,
            "to": target,
            **({"comment": comment} if comment else {}),
            **(
                {"approvals": approvals, "required_approvals": workspace.required_approvals}
                if action == "approve"
                else {}
            ),
        },
    )
    _refresh_pointers(revision.skill)
    lifecycle_notify(
        actor=actor, revision=revision, action=action, comment=comment, approvals=approvals
    )


def _scan_first(*, actor: Actor, revision: SkillRevision, action: str, comment: str) -> None:
    """A pending scan holds approval and publication: where the table would allow the action,
    the scan is done now, in a transaction of its own, so it stays whatever the gate answers."""
    try:
        _transition_check(actor=actor, revision=revision, action=action, comment=comment)
    except errors.XmemoError:
        return  # refused anyway, under the lock, with the table's own error
    scan_ensure(revision)


def revision_transition(
    *, actor: Actor, revision: SkillRevision, action: str, comment: str = ""
) -> SkillRevision:
    """Apply one lifecycle action that moves an existing revision (propose, withdraw, approve,
    reject, request_changes, publish, deprecate: the table's rows that create no revision). An
    approval publishes once the workspace's ``required_approvals`` are in; an approval of a
    published revision is a sign-off (docs/contract.md §21)."""
    require_scope(actor, lifecycle.transition_for(action, moves_only=True).scope)
    if action in _SCAN_GATED:
        _scan_first(actor=actor, revision=revision, action=action, comment=comment)
    with transaction.atomic():
        skill = _lock_skill(revision.skill_id)
        locked = SkillRevision.objects.select_related("workspace").get(pk=revision.pk)
        locked.skill = skill
        if action == lifecycle.APPROVE and locked.state == State.PUBLISHED:
            sign_off_record(actor=actor, revision=locked)  # a second sign-off (§21)
            return locked
        _transition_locked(actor=actor, revision=locked, action=action, comment=comment)
        return locked


def directory_import_record(
    *, actor: Actor, workspace: Workspace, roots: Sequence[str], skills: Sequence[str]
) -> None:
    """The import-level audit entry of the directory loader (docs/contract.md §4: every import
    is audited), once its skills are saved one by one; a run that stored nothing records
    nothing (a fresh install runs it on every boot)."""
    if not skills:
        return
    audit_record(
        actor=actor,
        workspace=workspace,
        action="skills.import.directory",
        target_type="workspace",
        target_id=workspace.slug,
        data={"roots": list(roots), "skills": sorted(skills)},
    )


def revision_restore(*, actor: Actor, revision: SkillRevision, message: str = "") -> SaveResult:
    """A new revision with ``revision``'s content, then handled as a save with intent publish."""
    require_scope(actor, lifecycle.transition_for(lifecycle.RESTORE).scope)
    workspace = revision.workspace
    role = _role_for_lifecycle(actor, workspace)
    target_state = lifecycle.check_transition(
        action=lifecycle.RESTORE,
        state=revision.state,
        workspace_kind=workspace.kind,
        role=role,
        is_author=True,
    )
    # No components: the save carries the restored revision's own over (``source_revision``).
    bundle = replace(
        revision_bundle(revision, with_components=False),
        source=SkillRevision.Source.RESTORE,
        source_ref=revision.revision_id,
    )
    with transaction.atomic():
        skill = _lock_skill(revision.skill_id)
        latest = skill.latest_revision
        if latest is not None and latest.canonical_hash == revision.canonical_hash:
            _publish_intent_on_existing(actor=actor, revision=latest)
            return SaveResult(revision=latest, created=False)
        return _save_locked(
            actor=actor,
            skill=skill,
            latest=latest,
            bundle=bundle,
            target_state=target_state,
            intent="publish",
            message=message or f"Restore revision {revision.revision_number}",
            source_revision=revision,
        )


def skill_set_status(*, actor: Actor, skill: Skill, status: str) -> Skill:
    """Archive or unarchive (who may: the lifecycle table's skill rows)."""
    actions = {lifecycle.ARCHIVED: lifecycle.ARCHIVE, lifecycle.ACTIVE: lifecycle.UNARCHIVE}
    row = lifecycle.skill_action(actions.get(status, lifecycle.ARCHIVE))
    require_scope(actor, row.scope)
    if status not in actions:
        raise errors.ValidationFailed(
            "status must be 'active' or 'archived'.", details={"field": "status"}
        )
    require_role(actor, skill.workspace, row.roles)
    with transaction.atomic():
        locked = _lock_skill(skill.pk)
        lifecycle.check_skill_status(action=row.action, status=locked.status)
        if locked.status != status:
            locked.status = status
            locked.save(update_fields=["status", "updated_at"])
            audit_record(
                actor=actor,
                workspace=locked.workspace,
                action=f"skills.skill.{row.action}",
                target_type="skill",
                target_id=locked.skill_id,
                data={"slug": locked.slug},
            )
        return locked


def revision_purge_on_delete(
    sender: type[SkillRevision], instance: SkillRevision, **_: Any
) -> None:
    """``pre_delete`` hook: a revision deleted through the ORM (a skill deleted for good, or
    any cascade) is marked "purging" first, the one state in which the database lets its
    component rows go. Django sends it before deleting any row of the cascade."""
    SkillRevision.objects.filter(pk=instance.pk).update(components_lock="purging")


def _job_holds_copy(job: Job, skill: Skill, revision_ids: set[str]) -> bool:
    """Whether a job's stored input, output or log may hold the skill's content."""
    params, result = job.params or {}, job.result or {}
    if params.get("revision_id") in revision_ids or params.get("skill_id") == skill.skill_id:
        return True  # an export of it, or an execution of one of its scripts
    if job.kind == Job.Kind.RESTORE:
        return True  # the uploaded backup holds the whole workspace it came from
    if job.kind == Job.Kind.EXPORT and "workspace" in params:
        # A workspace export holds every skill that existed when it ran: the whole file goes.
        return job.created_at >= skill.created_at
    if job.kind == Job.Kind.IMPORT:
        imported = result.get("skills") or []
        return any(isinstance(s, dict) and s.get("skill_id") == skill.skill_id for s in imported)
    return False


def _job_copies_erase(skill: Skill, *, revision_ids: set[str]) -> list[str]:
    """Erase what jobs keep of ``skill`` (uploaded archives, export files, execution outputs
    and logs); the rows stay, so a poll still answers, but nothing of the content does. Part
    of the delete's transaction. Answers the erased jobs' ids (for the tombstone)."""
    jobs = Job.objects.filter(workspace_id=skill.workspace_id).only(
        "pk", "job_id", "kind", "params", "result", "created_at"
    )
    erased = []
    for job in jobs:
        if not _job_holds_copy(job, skill, revision_ids):
            continue
        # An import's result lists ids and hashes only (as the tombstone does); other results
        # (an execution's output, an export's digest) derive from the content.
        result = job.result if job.kind == Job.Kind.IMPORT else None
        Job.objects.filter(pk=job.pk).update(
            input_data=None, output_data=None, output_name="", log="", result=result
        )
        erased.append(job.job_id)
    return erased


def skill_delete(*, actor: Actor, skill: Skill) -> None:
    """Delete an archived skill and all its revisions for good; the audit log keeps a tombstone."""
    row = lifecycle.skill_action(lifecycle.DELETE)
    require_scope(actor, row.scope)
    require_role(actor, skill.workspace, row.roles)
    with transaction.atomic():
        locked = _lock_skill(skill.pk)
        lifecycle.check_skill_status(action=row.action, status=locked.status)
        revisions = list(
            SkillRevision.objects.filter(skill=locked)
            .order_by("revision_number")
            .values_list("revision_id", "revision_number", "canonical_hash")
        )
        tombstone: dict[str, Any] = {"slug": locked.slug, "revisions": revisions}
        blob_ids = set(
            SkillComponent.objects.filter(revision__skill=locked).values_list("blob_id", flat=True)
        )
        tombstone["erased_jobs"] = _job_copies_erase(
            locked, revision_ids={rev_id for rev_id, _, _ in revisions}
        )
        Skill.objects.filter(pk=locked.pk).update(
            latest_revision=None, published_revision=None, current_revision=None
        )
        SkillRevision.objects.filter(skill=locked).exclude(parent=None).update(parent=None)
        locked.delete()
        audit_record(
            actor=actor,
            workspace=locked.workspace,
            action="skills.skill.delete",
            target_type="skill",
            target_id=skill.skill_id,
            data=tombstone,
        )
        # Bytes no other revision shares go too: "for good" means the content as well.
        Blob.objects.filter(pk__in=blob_ids).exclude(
            pk__in=SkillComponent.objects.filter(blob_id__in=blob_ids).values("blob_id")
        ).delete()
