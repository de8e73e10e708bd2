"""How Level 0 reads a query, and how it fuses rankings: pure functions (docs/search.md)."""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

# Words kept per query, counted after stop words are dropped: an agent's sentence keeps its
# content words however many "the", "my" and "since" it holds.
MAX_TERMS = 12
# PostgreSQL's English stop words (tsearch_data/english.stop): the full-text configuration drops
# these on PostgreSQL; the embedded default's search drops the same ones here.
STOP_WORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom
    this that these those am is are was were be been being have has had having do does did
    doing a an the and but if or because as until while of at by for with about against between
    into through during before after above below to from up down in out on off over under again
    further then once here there when where why how all any both each few more most other some
    such no nor not only own same so than too very s t can will just don should now
    """.split()  # noqa: SIM905 - a word list reads best as text
)
_WORD = re.compile(r"\w+", re.UNICODE)
# Reciprocal-rank fusion's constant (Cormack, Clarke & Büttcher 2009): large enough that the
# first few ranks of either list do not drown the other.
RRF_K = 60


@dataclass(frozen=True)
class QueryWords:
    """A query's content words, in order, and whether the last may be a word still being typed."""

    words: tuple[str, ...]
    last_is_prefix: bool


def query_words(text: str) -> QueryWords:
    """Lower-cased words (``snake_case`` and ``kebab-case`` split), stop words dropped, no
    repeats, at most MAX_TERMS. The last word counts as a prefix only when the text does not end
    after it (no space or punctuation follows: the user is still typing) and it has three or
    more characters, so "dep" finds "deploy" but "app" in a sentence does not match "apple"."""
    seen: dict[str, None] = {}
    last = ""
    for token in _WORD.findall(text.lower()):
        for part in token.split("_"):
            if part:
                last = part
                if part not in STOP_WORDS:
                    seen.setdefault(part, None)
    words = tuple(seen)[:MAX_TERMS]
    stripped = text.rstrip()
    typing = (
        bool(words)
        and words[-1] == last
        and len(last) >= 3
        and stripped == text
        and stripped.lower().endswith(last)
    )
    return QueryWords(words=words, last_is_prefix=typing)


def idf(*, documents: int, containing: int) -> float:
    """BM25's inverse document frequency: rare words weigh more, never below zero."""
    return math.log(1.0 + (documents - containing + 0.5) / (containing + 0.5))


def reciprocal_rank_fusion(
    *rankings: Sequence[Hashable], k: int = RRF_K
) -> list[tuple[Hashable, float]]:
    """Items of several best-first rankings, by the sum of 1 / (k + rank) over the rankings
    that hold them; ties keep the order of first appearance."""
    scores: dict[Hashable, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda pair: -pair[1])


# Normalized score fusion: how each ranking's scores are normalized, and the word ranking's share
# of a skill's score (the meaning ranking has the rest), chosen on the evaluation set's tuning
# part only (docs/search.md, *Fusion*).
NORMALIZE = "z"
LEXICAL_WEIGHT = 0.35


@dataclass(frozen=True)
class ScoredRanking:
    """One ranking's best-first ``(item, score)`` pairs, its weight in the fusion, and what an
    item it did not propose is taken to score (``floor``): it ranked below every item shown."""

    hits: Sequence[tuple[Hashable, float]]
    weight: float
    floor: float


def score_fusion(
    *rankings: ScoredRanking, normalize: str = NORMALIZE
) -> list[tuple[Hashable, float]]:
    """Items of several scored rankings by the weighted sum of their normalized scores, mapped
    into (0, 1) by the logistic function (the order is the sum's). Each ranking's scores are
    normalized over every item being fused (an item it did not propose counts as its
    ``floor``): ``z`` to standard scores (all equal: 0), ``minmax`` to [0, 1] (all equal: 1).
    An empty ranking adds nothing. Ties keep the order of first appearance."""
    items = list(dict.fromkeys(item for ranking in rankings for item, _ in ranking.hits))
    total = dict.fromkeys(items, 0.0)
    for ranking in rankings:
        if not ranking.hits:
            continue
        own = dict(ranking.hits)
        values = [own.get(item, ranking.floor) for item in items]
        for item, value in zip(items, _normalized(values, normalize), strict=True):
            total[item] += ranking.weight * value
    fused = [(item, 1.0 / (1.0 + math.exp(-score))) for item, score in total.items()]
    return sorted(fused, key=lambda pair: -pair[1])


def _normalized(values: list[float], method: str) -> list[float]:
    if method == "z":
        mean = sum(values) / len(values)
        spread = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        return [(v - mean) / spread if spread > 0 else 0.0 for v in values]
    low, high = min(values), max(values)
    return [(v - low) / (high - low) if high > low else 1.0 for v in values]
