"""How Level 0 reads a query, and how it fuses rankings: pure functions (docs/search.md)."""

from __future__ import annotations

import functools
import math
import re
import threading
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import snowballstemmer

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


# What Level 0 reads of a skill by words: its name (with its slug's words), its description and
# the start of its body, each a field of BM25F (docs/search.md, *By words*).
BODY_CHARS = 2000
# A "word" longer than this is not one (base64, a hash); PostgreSQL's lexemes stop at 2,047 bytes.
MAX_WORD = 60
# BM25F (Zaragoza et al. 2004, "simple BM25F"): per field a weight, a length normalisation b and
# the average length it is normalised to (fixed: revisions are immutable, so a skill's term
# statistics are computed once, at save); one saturation k1 over the weighted sum.
FIELD_WEIGHTS = (3.0, 1.5, 1.0)  # name, description, body
FIELD_B = (0.5, 0.75, 0.75)
FIELD_AVERAGE = (5.0, 16.0, 120.0)  # words per field, as the evaluation set's skills average
K1 = 1.2
_local = threading.local()


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Snowball's English stem of a lower-cased word: PostgreSQL's ``english_stem``."""
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:  # a stemmer keeps state while it works: one per thread
        stemmer = _local.stemmer = snowballstemmer.stemmer("english")
    return str(stemmer.stemWord(word))


def words_of(text: str) -> list[str]:
    """``text``'s words as Level 0 reads them: lower-cased, ``snake_case`` split, stop words
    and over-long words dropped, each stemmed; in order, repeats kept."""
    out = []
    for token in _WORD.findall(text.lower()):
        for part in token.split("_"):
            if part and part not in STOP_WORDS and len(part) <= MAX_WORD:
                out.append(stem(part))
    return out


def term_statistics(*, name: str, slug: str, description: str, body: str) -> dict[str, Any]:
    """A skill's BM25F statistics: ``l`` the length of each field (name and slug, description,
    body start) in words, ``t`` each stem's count per field."""
    fields = (
        words_of(f"{name} {slug.replace('-', ' ')}"),
        words_of(description),
        words_of(body_start(body)),
    )
    counts: dict[str, list[int]] = {}
    for index, field in enumerate(fields):
        for word in field:
            counts.setdefault(word, [0, 0, 0])[index] += 1
    return {"l": [len(field) for field in fields], "t": dict(sorted(counts.items()))}


class SearchColumns(TypedDict):
    """``Skill.search_*`` for one text: what the word ranking reads."""

    search_name: str
    search_description: str
    search_body: str
    search_terms: dict[str, Any]  # term_statistics' answer, stored as JSON
    search_lexemes: str


def search_columns(*, name: str, slug: str, description: str, body: str) -> SearchColumns:
    """The search columns of a skill showing this text (``Skill.search_*``)."""
    statistics = term_statistics(name=name, slug=slug, description=description, body=body)
    return {
        "search_name": name,
        "search_description": description,
        "search_body": body,
        "search_terms": statistics,
        "search_lexemes": lexemes(statistics),
    }


def body_start(body: str) -> str:
    """The part of a body read by words: its first BODY_CHARS characters, cut between words."""
    if len(body) <= BODY_CHARS:
        return body
    cut = body[:BODY_CHARS]
    space = cut.rfind(" ")
    return cut[:space] if space > BODY_CHARS // 2 else cut


def lexemes(statistics: dict[str, Any]) -> str:
    """The stems of ``term_statistics`` as matched: space-separated, a space at each end."""
    terms = statistics.get("t") or {}
    return f" {' '.join(terms)} " if terms else ""


def bm25f(
    counts: Sequence[Sequence[int | None] | None], lengths: Sequence[int], idfs: Sequence[float]
) -> float:
    """BM25F of one skill: ``counts`` per query word (its count per field, None if absent),
    ``lengths`` its fields' lengths, ``idfs`` each word's IDF."""
    norms = [  # a field longer than its average counts less, a shorter one no more
        weight / max(1.0, 1.0 - b + b * length / average)
        for weight, b, length, average in zip(
            FIELD_WEIGHTS, FIELD_B, lengths, FIELD_AVERAGE, strict=True
        )
    ]
    score = 0.0
    for count, weight in zip(counts, idfs, strict=True):
        if count:
            tf = sum((c or 0) * n for c, n in zip(count, norms, strict=True))
            score += weight * tf / (K1 + tf)
    return score


def idf(*, documents: int, containing: int) -> float:
    """BM25's inverse document frequency: rare words weigh more, never below zero."""
    return math.log(1.0 + (documents - containing + 0.5) / (containing + 0.5))


def trigrams(word: str) -> frozenset[str]:
    """pg_trgm's trigrams of one word (a stem: letters and digits only), padded as it pads
    them: two spaces before, one after."""
    padded = f"  {word} "
    return frozenset(padded[i : i + 3] for i in range(len(padded) - 2))


def trigram_similarity(mine: frozenset[str], theirs: frozenset[str]) -> float:
    """pg_trgm's ``similarity``: the trigrams two words share over all of either's."""
    shared = len(mine & theirs)
    return shared / (len(mine) + len(theirs) - shared)


def nearest_word(word: str, vocabulary: Mapping[str, int], *, at_least: float) -> str | None:
    """The word of ``vocabulary`` (word: how many skills hold it) most like ``word`` by
    ``trigram_similarity``, if ``at_least`` that; on a tie the one more skills hold, then the
    first in order."""
    mine = trigrams(word)
    best: tuple[float, int, str] | None = None
    for known, held in vocabulary.items():
        similarity = trigram_similarity(mine, trigrams(known))
        if similarity >= at_least and (
            best is None or (-similarity, -held, known) < (-best[0], -best[1], best[2])
        ):
            best = (similarity, held, known)
    return None if best is None else best[2]


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
