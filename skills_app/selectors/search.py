"""Level 0 search over the current revision of active skills.

PostgreSQL: full-text search on the stored ``search_vector`` (name and slug weigh A,
description B, body C) and ``search_head`` (name, slug, description) columns of migration
0003, both GIN-indexed, in relevance tiers (see ``tiers_for``) ranked with ``ts_rank``. Words
are matched as prefixes, and a skill need not match all of them (an agent describes a task in a
sentence; requiring every word could find nothing) — but matching all of them ranks higher.

SQLite (the embedded default): the same candidates by substring match, scored in Python with
the same weights. Good enough for a demo-sized registry; production runs PostgreSQL.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, TypedDict

from django.db import connection

from ..access import Actor, readable_workspace_sql
from ..domain.lifecycle import LATEST_FALLBACK_KINDS
from ..infra import db
from ..models import Skill, SkillRevision, Workspace

MAX_TERMS = 12
# ts_rank weights for {D, C, B, A}: body (C) < description (B) < name and slug (A).
WEIGHTS = "{0.05, 0.2, 0.4, 1.0}"
_WORD = re.compile(r"\w+", re.UNICODE)

_SKILL = Skill._meta.db_table
_WS = Workspace._meta.db_table
_REV = SkillRevision._meta.db_table


def query_terms(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        for part in word.split("_"):
            if part:
                seen.setdefault(part, None)
    return list(seen)[:MAX_TERMS]


class SearchResult(TypedDict):
    """One Level 0 descriptor (docs/contract.md §5), best match first."""

    skill_id: str
    slug: str
    workspace: str
    scope: str
    name: str
    description: str
    published_revision_number: int | None
    score: float
    # The estimated context cost of the Level 1 answer this hit leads to (domain.context_cost),
    # stored with the revision Level 1 serves by default: the skill's current one.
    approx_tokens: int


def search_skills(
    *, actor: Actor, text: str, workspace: Workspace | None, limit: int
) -> list[SearchResult]:
    terms = query_terms(text)
    if not terms:
        return []
    if connection.vendor == "postgresql":
        rows = _search_postgresql(actor, text, terms, workspace, limit)
    else:
        rows = _search_fallback(actor, terms, workspace, limit)
    return [
        {
            "skill_id": skill_id,
            "slug": slug,
            "workspace": ws,
            "scope": kind,
            "name": name,
            "description": description,
            "published_revision_number": published_number,
            "score": round(float(score), 6),
            "approx_tokens": cost,
        }
        for skill_id, slug, ws, kind, name, description, published_number, score, cost in rows
    ]


def _filters(actor: Actor, workspace: Workspace | None) -> tuple[str, list[Any]]:
    access_sql, access_params = readable_workspace_sql(actor, "s.workspace_id")
    # The revision Level 1 answers by default (docs/contract.md §5): the published one, else — only
    # where
    # unreviewed revisions may be served — the current one, which the search columns mirror.
    fallback_kinds = sorted(LATEST_FALLBACK_KINDS)
    sql = (
        f" s.status = 'active' AND s.current_revision_id IS NOT NULL"
        f" AND (s.published_revision_id IS NOT NULL"
        f" OR w.kind IN ({', '.join(['%s'] * len(fallback_kinds))}))"
        f" AND w.cloud_skills_enabled = %s AND {access_sql}"
    )
    params: list[Any] = [*fallback_kinds, True, *access_params]
    if workspace is not None:
        sql += " AND s.workspace_id = %s"
        params.append(workspace.pk)
    if actor.token is not None:
        # invoke: {model: false} marks a skill for people only: agents don't find it.
        sql += " AND s.model_invocable = %s"
        params.append(True)
    return sql, params


# Tiers, best first; each runs only while fewer than ``limit`` skills were found:
#   1. every word matches, and some word is in the name, slug or description;
#   2. every word matches (the body supplies some);
#   3. some word is in the name, slug or description;
#   4. some word matches anywhere (so only in the body).
# (One word: tiers 1 and 4 only — in the head, then anywhere.) A tier's bonus keeps each of its
# skills above every skill of the next tier. Within a tier, ``ts_rank`` of the small head vector
# orders them (name and slug weigh A, description B), so ranking never reads the large body
# vector, which only decides matching. A tier looks at CANDIDATE_CAP matching skills at most, so
# one very common word costs a bounded amount however large the registry grows.
CANDIDATE_CAP = 1000


@dataclass(frozen=True)
class _Tier:
    head: str | None  # tsquery the head vector must match
    full: str | None  # tsquery the full vector must match
    bonus: float


def tiers_for(terms: list[str]) -> list[_Tier]:
    # to_tsquery input built from plain words only (\w+), each quoted and prefix-matched;
    # stop words drop out inside to_tsquery itself.
    words = [f"'{term}':*" if len(term) >= 3 else f"'{term}'" for term in terms]
    every, some = " & ".join(words), " | ".join(words)
    if len(words) == 1:
        return [_Tier(some, None, 3.0), _Tier(None, some, 0.0)]
    return [
        _Tier(some, every, 3.0),
        _Tier(None, every, 2.0),
        _Tier(some, None, 1.0),
        _Tier(None, some, 0.0),
    ]


def _tier_sql(tier: _Tier, where: str) -> str:
    match = []
    if tier.head is not None:
        match.append("s.search_head @@ to_tsquery('english', %s)")
    if tier.full is not None:
        match.append("s.search_vector @@ to_tsquery('english', %s)")
    return (
        "WITH candidates AS ("  # noqa: S608 - table and column names only; values are parameters
        f" SELECT s.id FROM {_SKILL} s JOIN {_WS} w ON w.id = s.workspace_id"
        f" WHERE {' AND '.join(match)} AND {where}"
        " AND NOT (s.id = ANY(%s::bigint[])) LIMIT %s)"
        " SELECT s.id, s.skill_id, s.slug, w.slug, w.kind, s.search_name, s.search_description,"
        " p.revision_number,"
        f" %s + ts_rank('{WEIGHTS}', s.search_head, to_tsquery('english', %s), 1)"
        " * CASE WHEN s.slug = %s THEN 2.0 ELSE 1.0 END AS score, r.approx_tokens"
        f" FROM candidates c JOIN {_SKILL} s ON s.id = c.id"
        f" JOIN {_WS} w ON w.id = s.workspace_id"
        f" LEFT JOIN {_REV} p ON p.id = s.published_revision_id"
        f" JOIN {_REV} r ON r.id = s.current_revision_id"
        " ORDER BY score DESC, s.slug, w.slug LIMIT %s"
    )


def _search_postgresql(
    actor: Actor, text: str, terms: list[str], workspace: Workspace | None, limit: int
) -> list[tuple[Any, ...]]:
    where, params = _filters(actor, workspace)
    slug_guess = "-".join(terms)
    some = " | ".join(f"'{term}':*" if len(term) >= 3 else f"'{term}'" for term in terms)
    found: list[tuple[Any, ...]] = []
    seen: list[int] = []
    for tier in tiers_for(terms):
        if len(found) >= limit:
            break
        match_params = [q for q in (tier.head, tier.full) if q is not None]
        rows = db.fetch_all(
            _tier_sql(tier, where),
            [
                *match_params,
                *params,
                seen,
                CANDIDATE_CAP,
                tier.bonus,
                some,
                slug_guess,
                limit - len(found),
            ],
            prepare=False,
        )
        found += [row[1:] for row in rows]
        seen += [row[0] for row in rows]
    return found


# Field weights of the fallback, mirroring the PostgreSQL ones.
_FIELD_WEIGHTS = (1.0, 1.0, 0.4, 0.05)  # name, slug, description, body
_FALLBACK_CANDIDATES = 2000


def _search_fallback(
    actor: Actor, terms: list[str], workspace: Workspace | None, limit: int
) -> list[tuple[Any, ...]]:
    where, params = _filters(actor, workspace)
    matches = []
    for term in terms:
        like = "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        matches.append(
            "(lower(s.search_name) LIKE %s ESCAPE '\\' OR s.slug LIKE %s ESCAPE '\\'"
            " OR lower(s.search_description) LIKE %s ESCAPE '\\'"
            " OR lower(s.search_body) LIKE %s ESCAPE '\\')"
        )
        params.extend([like] * 4)
    sql = (
        "SELECT s.skill_id, s.slug, w.slug, w.kind, s.search_name, s.search_description,"  # noqa: S608 - table and column names only; values are parameters
        " p.revision_number, s.search_body, r.approx_tokens"
        f" FROM {_SKILL} s"
        f" JOIN {_WS} w ON w.id = s.workspace_id"
        f" LEFT JOIN {_REV} p ON p.id = s.published_revision_id"
        f" JOIN {_REV} r ON r.id = s.current_revision_id"
        f" WHERE {where} AND ({' OR '.join(matches)})"
        f" LIMIT {_FALLBACK_CANDIDATES}"
    )
    rows = db.fetch_all(sql, params)
    slug_guess = "-".join(terms)
    scored = []
    for skill_id, slug, ws, kind, name, description, published, body, approx_tokens in rows:
        fields = (name.lower(), slug, description.lower(), body.lower())
        score = 0.0
        for term in terms:
            for weight, field in zip(_FIELD_WEIGHTS, fields, strict=True):
                hits = field.count(term)
                if hits:
                    score += weight * (1 + math.log(hits))
        score /= 1 + math.log(1 + len(body) / 1000)
        if slug == slug_guess:
            score *= 2
        # The tiers of the PostgreSQL search (see ``tiers_for``).
        every = all(any(term in field for field in fields) for term in terms)
        in_head = any(term in field for term in terms for field in fields[:3])
        if len(terms) == 1:
            score += 3.0 if in_head else 0.0
        else:
            score += 3.0 if every and in_head else 2.0 if every else 1.0 if in_head else 0.0
        scored.append(
            (skill_id, slug, ws, kind, name, description, published, score, approx_tokens)
        )
    scored.sort(key=lambda row: (-row[7], row[1], row[2]))
    return scored[:limit]
