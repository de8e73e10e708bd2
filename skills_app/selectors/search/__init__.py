"""Level 0 search: words and meaning, fused (docs/search.md).

Two rankings of the skills the caller may read — by words (``lexical``: whole words weighed by
rarity, name above description above body, typos forgiven) and by meaning (``semantic``: the
query's embedding against each skill's) — fused by their normalized scores (``fuse_by_score``),
then fetched through the search gate (``gate``), which every answered skill passes whichever
ranking proposed it. Where no embedding model is installed the word ranking answers alone (the
encoder says so once in the log). A query of stop words only has no content to rank: no
results.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from skills_app.access import Actor
from skills_app.domain.search_text import (
    LEXICAL_WEIGHT,
    NORMALIZE,
    ScoredRanking,
    query_words,
    reciprocal_rank_fusion,
    score_fusion,
)
from skills_app.infra import db
from skills_app.models import Skill, SkillRevision, Workspace
from skills_app.selectors.search import lexical, semantic
from skills_app.selectors.search.gate import Gate, gate_for, member_sql, served_gate

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "Fusion",
    "SearchResult",
    "StandIn",
    "fuse_by_rank",
    "fuse_by_score",
    "search_gated",
    "search_skills",
    "served_gate",
]

_SKILL = Skill._meta.db_table
_WS = Workspace._meta.db_table
_REV = SkillRevision._meta.db_table
# How many skills each ranking proposes to the fusion.
POOL = 50
# How the word ranking's and the meaning ranking's (skill pk, score) lists, each of at most
# ``pool``, become one ranking.
Fusion = Callable[[list[tuple[int, float]], list[tuple[int, float]], int], list[tuple[int, float]]]


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


def fuse_by_score(
    by_words: list[tuple[int, float]],
    by_meaning: list[tuple[int, float]],
    pool: int,
    *,
    lexical_weight: float = LEXICAL_WEIGHT,
    normalize: str = NORMALIZE,
) -> list[tuple[int, float]]:
    """Level 0's fusion: each skill scores ``lexical_weight`` times its standard (z) word score
    plus the rest times its standard cosine, both over the skills being fused. A skill the words
    did not propose counts as their last proposal's score when they were cut at ``pool`` (it
    ranked no higher), else as holding none of them (0); one the meaning ranking (the nearest
    ``pool``, whatever their cosine) did not propose, as its last cosine when it was cut at
    ``pool``, else (it holds every skill with a vector: this one has none yet) as not about the
    query, ``semantic.MIN_SIMILARITY``, or the last cosine if lower."""
    meaning_floor = semantic.MIN_SIMILARITY
    if by_meaning:
        last = by_meaning[-1][1]
        meaning_floor = last if len(by_meaning) >= pool else min(last, meaning_floor)
    fused = score_fusion(
        ScoredRanking(by_words, lexical_weight, by_words[-1][1] if len(by_words) >= pool else 0.0),
        ScoredRanking(by_meaning, 1.0 - lexical_weight, meaning_floor),
        normalize=normalize,
    )
    return [(int(pk), score) for pk, score in fused]  # type: ignore[call-overload]


def fuse_by_rank(
    by_words: list[tuple[int, float]], by_meaning: list[tuple[int, float]], pool: int
) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion (k = 60) of the two rankings: Level 0's fusion until normalized
    score fusion measured better; the baseline ``bench.search_quality`` computes beside it."""
    fused = reciprocal_rank_fusion([pk for pk, _ in by_words], [pk for pk, _ in by_meaning])
    return [(int(pk), score) for pk, score in fused]  # type: ignore[call-overload]


@dataclass(frozen=True)
class StandIn:
    """A revision standing in for its skill (trigger checks, docs/contract.md §22): its words
    are in the skill's row for the while (``services.evals``), its descriptor's vector here."""

    skill_pk: int
    vector: np.ndarray | None


def search_skills(
    *,
    actor: Actor,
    text: str,
    workspace: Workspace | None,
    limit: int,
    fusion: Fusion = fuse_by_score,
) -> list[SearchResult]:
    if not query_words(text).words:
        return []
    return search_gated(
        gate=gate_for(actor=actor, workspace=workspace), text=text, limit=limit, fusion=fusion
    )


def search_gated(
    *,
    gate: Gate,
    text: str,
    limit: int,
    fusion: Fusion = fuse_by_score,
    stand_in: StandIn | None = None,
) -> list[SearchResult]:
    """Level 0 under ``gate``: what ``search_skills`` answers once the gate is known."""
    words = query_words(text)
    if not words.words or not gate.workspace_ids:
        return []
    pool = max(POOL, limit)
    embedding = semantic.embed_query(text)  # on a helper thread, while the words are ranked
    by_words = lexical.rank(gate=gate, words=words, slug_guess="-".join(words.words), limit=pool)
    if embedding is None:
        ranked = by_words
    else:
        by_meaning = semantic.rank(
            gate=gate,
            query=embedding.result(),
            limit=pool,
            stand_in=None if stand_in is None else (stand_in.skill_pk, stand_in.vector),
        )
        about = {pk for pk, _ in by_words}
        about.update(pk for pk, cosine in by_meaning if cosine >= semantic.MIN_SIMILARITY)
        ranked = [pair for pair in fusion(by_words, by_meaning, pool) if pair[0] in about]
    return _descriptors(gate, ranked, limit)


def _descriptors(gate: Gate, ranked: list[tuple[int, float]], limit: int) -> list[SearchResult]:
    """The ranked skills that pass the gate now, as descriptors, in rank order: the best
    twice ``limit`` are fetched first, the rest only if too few of those pass (a vector index's
    stale proposal, a skill archived since)."""
    results: list[SearchResult] = []
    start, size = 0, 2 * limit
    while start < len(ranked) and len(results) < limit:
        batch = ranked[start : start + size]
        found = _descriptor_rows(gate, tuple(pk for pk, _ in batch))
        for pk, score in batch:
            if pk not in found:
                continue
            skill_id, slug, ws, kind, name, description, published, approx_tokens = found[pk]
            results.append(
                {
                    "skill_id": skill_id,
                    "slug": slug,
                    "workspace": ws,
                    "scope": kind,
                    "name": name,
                    "description": description,
                    "published_revision_number": published,
                    "score": round(float(score), 6),
                    "approx_tokens": approx_tokens,
                }
            )
            if len(results) == limit:
                break
        start, size = start + size, len(ranked)
    return results


def _descriptor_rows(gate: Gate, pks: tuple[int, ...]) -> dict[int, tuple[Any, ...]]:
    where, params = gate.sql("s")
    chosen, chosen_params = member_sql("s.id", pks)
    rows = db.fetch_all(
        "SELECT s.id, s.skill_id, s.slug, w.slug, w.kind, s.search_name, s.search_description,"  # noqa: S608 - names only
        " p.revision_number, coalesce(r.approx_tokens, 0)"
        f" FROM {_SKILL} s JOIN {_WS} w ON w.id = s.workspace_id"
        f" LEFT JOIN {_REV} p ON p.id = s.published_revision_id"
        # LEFT: a skill linted before its first save has no revision yet (trigger checks, §22).
        f" LEFT JOIN {_REV} r ON r.id = s.current_revision_id"
        f" WHERE {chosen} AND {where}",
        [*chosen_params, *params],
    )
    return {row[0]: row[1:] for row in rows}
