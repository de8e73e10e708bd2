"""Which revision a slug or a pinned revision id names, and may this actor read it: one
prepared query, cached per process under the invalidation generation."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from skills_app import errors
from skills_app.access import (
    Actor,
    readable_workspace_sql,
    require_enabled_workspace,
    workspace_for,
)
from skills_app.domain.lifecycle import LATEST_FALLBACK_KINDS
from skills_app.infra import db, invalidation
from skills_app.models import RevisionScan, Skill, SkillLabel, SkillRevision, Workspace
from skills_app.selectors.scans import PENDING

_SKILL = Skill._meta.db_table
_WS = Workspace._meta.db_table
_REV = SkillRevision._meta.db_table
_LABEL = SkillLabel._meta.db_table
_SCAN = RevisionScan._meta.db_table


PUBLISHED = SkillRevision.State.PUBLISHED


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
    # The names of the labels pointing at this revision, sorted (every Level 1 answer lists
    # them): mutable, so part of the resolution, cached under the generation like it.
    labels: tuple[str, ...] = ()
    # The revision's scan summary (``served_scan``), read by the same statement: mutable too.
    scan: dict[str, Any] = field(default_factory=lambda: _summary(None), compare=False)


def served_scan(target: _Target) -> dict[str, Any]:
    """The scan summary of the revision served (docs/contract.md §21), as the resolution read
    it: mutable (a scan finishes or a new scanner version rescans), so cached with it under
    the generation, which a stored scan moves."""
    return target.scan


def scan_stamp(scan: dict[str, Any]) -> str:
    """What tells one scan summary of a revision from another: a revision is scanned once per
    scanner version (an override is no part of the summary, docs/contract.md §21)."""
    return f"{scan['verdict']}|{scan['scanner_version']}"


def _summary(verdict: str | None, version: str | None = None, findings: Any = ()) -> dict[str, Any]:
    """``scan_summaries``' summary from ``_SCAN_COLUMNS`` (all NULL: pending)."""
    if verdict is None:
        return {"verdict": PENDING, "findings": [], "scanner_version": None}
    if isinstance(findings, str | bytes):  # SQLite hands JSON over as text
        findings = json.loads(findings)
    return {"verdict": verdict, "findings": list(findings), "scanner_version": version}


def _scan_join(revision_pk_sql: str) -> str:
    """The join that gives ``_SCAN_COLUMNS`` of the revision ``revision_pk_sql`` names."""
    return f" LEFT JOIN {_SCAN} sc ON sc.revision_id = {revision_pk_sql}"


def _root_key(target: _Target, resolved_by: str) -> str:
    """The key of the encoded Level 1 body without ``arguments``: everything in it is fixed by
    these values (the revision's content never changes), so it is encoded once per process."""
    return ":".join(
        (
            "rootjson",
            target.revision_id,
            target.state,
            resolved_by,
            target.workspace,
            target.slug,
            ",".join(target.labels),
            scan_stamp(served_scan(target)),
        )
    )


def _keyed(target: _Target, resolved_by: str) -> tuple[_Target, str, str]:
    """A resolution with its body's key, worked out once and cached with it."""
    return target, resolved_by, _root_key(target, resolved_by)


# ``_summary``'s arguments, in one statement with the resolution (no round trip of its own).
_SCAN_COLUMNS = "sc.verdict, sc.scanner_version, sc.findings"


def _labels_sql(revision_pk_sql: str) -> str:
    """A column: the names of the labels on the revision ``revision_pk_sql`` names, joined by
    commas (label names hold none), from the label index — no extra round trip."""
    joined = db.names_joined_sql("x.name")
    return f"(SELECT {joined} FROM {_LABEL} x WHERE x.revision_id = {revision_pk_sql})"  # noqa: S608 - column and table names only


def _labels(joined: str | None) -> tuple[str, ...]:
    return tuple(sorted(joined.split(","))) if joined else ()


def _not_found(slug: str, ws_slug: str | None) -> errors.NotFound:
    shown = f"{ws_slug}/{slug}" if ws_slug else slug
    return errors.NotFound(
        f"No skill '{shown}' in the workspaces this token can read.",
        details={"slug": slug, **({"workspace": ws_slug} if ws_slug else {})},
    )


def _resolve_by_slug(
    actor: Actor, slug: str, ws_slug: str | None, fallback: str, label: str | None = None
) -> tuple[_Target, str]:
    """The revision a slug serves (published, else the latest fallback), or with ``label`` the
    one that label of the skill points at."""
    access_sql, access_params = readable_workspace_sql(actor, "s.workspace_id")
    params: list[Any] = []
    if label is None:
        served, label_join = "COALESCE(p.id, c.id)", ""
    else:
        served = "lr.id"
        label_join = (
            f" LEFT JOIN {_LABEL} l ON l.skill_id = s.id AND l.name = %s"
            f" LEFT JOIN {_REV} lr ON lr.id = l.revision_id"
        )
        params.append(label)
    label_cols = ", lr.id, lr.revision_id, lr.state" if label is not None else ""
    sql = (
        "SELECT s.skill_id, s.status, w.slug, w.cloud_skills_enabled, w.kind,"  # noqa: S608 - table and column names only; values are parameters
        f" p.id, p.revision_id, c.id, c.revision_id, c.state, {_labels_sql(served)},"
        f" {_SCAN_COLUMNS}{label_cols}"
        f" FROM {_SKILL} s"
        f" JOIN {_WS} w ON w.id = s.workspace_id"
        f" LEFT JOIN {_REV} p ON p.id = s.published_revision_id"
        f" LEFT JOIN {_REV} c ON c.id = s.current_revision_id{label_join}{_scan_join(served)}"
        f" WHERE s.slug = %s AND {access_sql}"
    )
    params += [slug, *access_params]
    if ws_slug is not None:
        sql += " AND w.slug = %s"
        params.append(ws_slug)
    rows = db.fetch_all(sql, params)
    # Archived skills are left out of recall by slug (docs/contract.md §4); pinned reads still work.
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
    skill_id, _, ws, _, kind, pub_pk, pub_id, cur_pk, cur_id, cur_state, names = enabled[0][:11]
    labels, scan = _labels(names), _summary(*enabled[0][11:14])
    if label is not None:
        label_pk, label_rev_id, label_state = enabled[0][14:]
        if label_pk is None:
            raise errors.LabelNotFound(
                f"'{ws}/{slug}' has no label '{label}'.",
                details={"skill_id": skill_id, "slug": slug, "workspace": ws, "label": label},
            )
        target = _Target(label_pk, label_rev_id, label_state, skill_id, slug, ws, labels, scan)
        return target, "label"
    if pub_pk is not None:
        return _Target(pub_pk, pub_id, PUBLISHED, skill_id, slug, ws, labels, scan), "published"
    served_unreviewed = kind in LATEST_FALLBACK_KINDS
    if fallback == "latest" and served_unreviewed and cur_pk is not None:
        # The skill's current revision is its newest non-deprecated one (services.skills).
        target = _Target(cur_pk, cur_id, cur_state, skill_id, slug, ws, labels, scan)
        return target, "latest_fallback"
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
        "SELECT r.id, r.revision_id, r.state, s.skill_id, s.slug, w.slug, w.cloud_skills_enabled,"  # noqa: S608 - fixed SQL
        f" {_labels_sql('r.id')}, {_SCAN_COLUMNS}"
        f" FROM {_REV} r"
        f" JOIN {_SKILL} s ON s.id = r.skill_id"
        f" JOIN {_WS} w ON w.id = r.workspace_id{_scan_join('r.id')}"
        f" WHERE r.revision_id = %s AND {access_sql}",
        [revision_id, *access_params],
    )
    if not rows:
        raise errors.NotFound(
            f"Revision '{revision_id}' was not found.", details={"revision_id": revision_id}
        )
    rev_pk, rev_id, state, skill_id, skill_slug, ws, enabled, names = rows[0][:8]
    if (slug is not None and slug != skill_slug) or (ws_slug is not None and ws_slug != ws):
        raise errors.NotFound(
            f"Revision '{revision_id}' is not a revision of '{ws_slug + '/' if ws_slug else ''}"
            f"{slug or skill_slug}'.",
            details={"revision_id": revision_id, "slug": slug},
        )
    if not enabled:
        raise errors.FeatureDisabled(details={"workspace": ws})
    scan = _summary(*rows[0][8:])
    return _Target(rev_pk, rev_id, state, skill_id, skill_slug, ws, _labels(names), scan)
