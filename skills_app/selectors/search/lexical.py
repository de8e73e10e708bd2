"""Level 0's word ranking: BM25F over a skill's name, description and body start, IDF among what
the caller may read, typos forgiven (docs/search.md, *By words*).

Both databases match the stems of ``Skill.search_lexemes`` and score with the statistics of
``Skill.search_terms`` (``domain.search_text``, computed at save), in the same Python, so they
answer alike. PostgreSQL finds candidates through the GIN-indexed ``search_vector`` and
``search_head`` (migration 0031), within ``MATCH_BUDGET`` and ``EVERY_WORD_BUDGET``, weighs words
by the per-workspace vocabulary of 0014 and maps an unknown word to its nearest known one
(``pg_trgm``); SQLite reads every readable skill holding a word, and for an unknown word every
readable skill's stems, to map it by the same similarity in Python."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.db import connection

from skills_app.domain.search_text import QueryWords, bm25f, idf, nearest_word, stem
from skills_app.infra import db
from skills_app.models import Skill
from skills_app.selectors.search.gate import Gate

_SKILL = Skill._meta.db_table
# The rare words' matches read per query, all of each word's (``_rarest_within_budget``).
MATCH_BUDGET = 2000
# Skills holding every word read per query: for words held by thousands, the bulk of a search's
# time (at 100,000 skills, one common word: 10 ms reading 2,000 of them, 6.5 ms reading 1,000).
EVERY_WORD_BUDGET = 1000
CANDIDATES = 100
# A typo stands for a vocabulary word at least this similar (pg_trgm similarity).
TYPO_SIMILARITY = 0.45
# An exact slug match adds this to the BM25F score.
SLUG_BONUS = 1.0


@dataclass(frozen=True)
class _Term:
    query: str  # a tsquery: one lexeme, maybe a prefix
    lexeme: str
    prefix: bool
    documents: int  # readable skills holding it
    weight: float  # IDF, times the query words standing for it ("errors", "error": twice)


def rank(*, gate: Gate, words: QueryWords, slug_guess: str, limit: int) -> list[tuple[int, float]]:
    """(skill pk, score) of the best word matches, best first."""
    if not gate.workspace_ids or not words.words:
        return []
    if connection.vendor == "postgresql":
        documents, terms = _terms(gate, words)
        if not terms:
            return []
        return _rank_postgresql(gate, terms, _held_by_many(documents, terms), slug_guess, limit)
    return _rank_fallback(gate, words, slug_guess, limit)


def _held_by_many(documents: int, terms: Sequence[_Term]) -> bool:
    """Whether more skills are expected to hold every word than EVERY_WORD_BUDGET reads (the
    words taken as independent): then the skills naming them all are looked for first."""
    expected = float(documents)
    for term in terms:
        expected *= term.documents / max(documents, 1)
    return expected > EVERY_WORD_BUDGET


def _terms(gate: Gate, words: QueryWords) -> tuple[int, list[_Term]]:
    """The readable skills' count, and each word's lexeme (stemmed by the English
    configuration) and IDF over them. A word no readable skill holds is, if it is the last word
    being typed, a prefix of the words that some do; else it stands for its nearest known word,
    if one is near."""
    readable = list(gate.workspace_ids)
    stems = [stem(word) for word in words.words]
    rows = db.fetch_all(
        "SELECT w.ord::int, w.lexeme, (SELECT coalesce(sum(t.df), 0) FROM skills_app_searchterm t"
        "   WHERE t.workspace_id = ANY(%s) AND t.lexeme = w.lexeme)"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS w(lexeme, ord)"
        " UNION ALL SELECT 0, '', (SELECT coalesce(sum(t.df), 0)"
        "   FROM skills_app_searchterm t WHERE t.workspace_id = ANY(%s) AND t.lexeme = '')"
        " ORDER BY 1",
        [readable, stems, readable],
    )
    documents = int(rows[0][2])
    last = len(words.words)
    terms: dict[str, _Term] = {}  # one lexeme from two words ("deploy", "deploying") weighs twice
    for ord_, lexeme, df in rows[1:]:
        prefix = False
        if df == 0:
            if ord_ == last and words.last_is_prefix and len(lexeme) >= 3:
                df = _vocabulary_df(gate, "t.lexeme LIKE %s", _like_escape(lexeme) + "%")
                prefix = df > 0
            if not prefix:
                nearest = _nearest_known(gate, lexeme)
                if nearest is None:
                    continue
                lexeme, df = nearest
        query = "'" + lexeme.replace("'", "''") + "'" + (":*" if prefix else "")
        count = min(int(df), documents)
        weight = idf(documents=documents, containing=count)
        said = terms.get(query)
        terms[query] = (
            _Term(query=query, lexeme=lexeme, prefix=prefix, documents=count, weight=weight)
            if said is None
            else replace(said, weight=said.weight + weight)
        )
    return documents, list(terms.values())


def _vocabulary_df(gate: Gate, condition: str, *params: object) -> int:
    """Readable skills holding a vocabulary word that meets ``condition``. The words are found
    through the trigram index first (MATERIALIZED), then narrowed to the readable workspaces:
    the other way round reads every word of a large workspace."""
    rows = db.fetch_all(
        "WITH m AS MATERIALIZED (SELECT t.workspace_id, t.df FROM skills_app_searchterm t"  # noqa: S608 - a fixed condition
        f" WHERE {condition})"
        " SELECT coalesce(sum(m.df), 0) FROM m WHERE m.workspace_id = ANY(%s)",
        [*params, list(gate.workspace_ids)],
        prepare=False,
    )
    return int(rows[0][0])


def _nearest_known(gate: Gate, lexeme: str) -> tuple[str, int] | None:
    """The readable vocabulary word most like ``lexeme`` (a typo), and how many skills hold it."""
    if len(lexeme) < 4:  # too short to tell a typo from another word
        return None
    rows = db.fetch_all(
        "WITH m AS MATERIALIZED (SELECT t.workspace_id, t.lexeme, t.df"
        " FROM skills_app_searchterm t WHERE t.lexeme %% %s AND t.lexeme <> '')"
        " SELECT m.lexeme, sum(m.df) FROM m WHERE m.workspace_id = ANY(%s) AND m.df > 0"
        " AND similarity(m.lexeme, %s) >= %s"
        " GROUP BY m.lexeme ORDER BY max(similarity(m.lexeme, %s)) DESC, sum(m.df) DESC"
        " LIMIT 1",
        [lexeme, list(gate.workspace_ids), lexeme, TYPO_SIMILARITY, lexeme],
        prepare=False,
    )
    return (rows[0][0], int(rows[0][1])) if rows else None


def _rarest_within_budget(terms: Sequence[_Term]) -> list[bool]:
    """Which words have all their matches read: the rarest first, while their matches together
    fit MATCH_BUDGET (twelve words just under any per-word cap would read twelve times it)."""
    rare = [False] * len(terms)
    spent = 0
    for index in sorted(range(len(terms)), key=lambda i: terms[i].documents):
        spent += terms[index].documents
        if spent > MATCH_BUDGET:
            break
        rare[index] = True
    return rare


def _rank_postgresql(
    gate: Gate, terms: Sequence[_Term], named_first: bool, slug_guess: str, limit: int
) -> list[tuple[int, float]]:
    where, gate_params = gate.sql("s")
    rare = _rarest_within_budget(terms)
    # Whether a match names a word in its name or description: the candidates' tie-breaker.
    any_word = " | ".join(t.query for t in terms)
    every_word = " & ".join(t.query for t in terms)
    params: list[object] = [
        [t.query for t in terms],
        [t.weight for t in terms],
        [t.lexeme for t in terms],
        [t.prefix for t in terms],
        rare,
        named_first,
        every_word,
        *gate_params,
        CANDIDATES,
        any_word,
        CANDIDATES,
        every_word,
        *gate_params,
        EVERY_WORD_BUDGET,
        any_word,
        CANDIDATES,
        CANDIDATES,
        *gate_params,
        MATCH_BUDGET,
        # What a skill holding every word scores for being anywhere: every word's IDF.
        sum(t.weight for t in terms),
        CANDIDATES,
    ]
    # Each match arrives once per way it was found, with whether its small name/description
    # vector holds a word: a rare word's match carries that word's IDF, a match of all the words
    # the flag that it holds them all. Where more skills hold every word than the budget reads
    # (``named_first``), those whose name or description holds them all are found first through
    # that vector's own index (6,500 postings for "docker" at 100,000 skills, where the word
    # index lists 16,500 and reading 1,000 of those rows took 3 ms); the others holding every
    # word are read only if too few do, and a rare word's matches (holding fewer words, they
    # rank below) only if too few skills hold every word (at 10,000 skills one topic word is
    # rare, and reading its 1,700 matches took 7 of the statement's 9 ms). The queries are typed
    # once (tsquery[]), not cast per row. The planner sees no word (the rare ones come from
    # ``t``, the others and the flag through sub-selects): told that a word is common, it read
    # the table from its start, testing each row's large word vector until EVERY_WORD_BUDGET
    # matched — 110-150 ms for one common word at 100,000 skills, where the word index answers
    # in 10. The CANDIDATES best come back with their fields' lengths and each word's counts (a
    # prefix: the sum over the stems it begins), scored in Python.
    sql = (
        "WITH t(q, idf, lexeme, prefix, rare, ord) AS"  # noqa: S608 - table and column names only; values are parameters
        " (SELECT * FROM unnest(%s::tsquery[], %s::float8[], %s::text[], %s::bool[],"
        " %s::bool[]) WITH ORDINALITY),"
        f" named AS (SELECT s.id FROM {_SKILL} s WHERE (SELECT %s::bool)"
        f" AND s.search_head @@ (SELECT %s::tsquery) AND {where} LIMIT %s),"
        # Skills holding every word (for one word: all of its matches, up to the budget), read
        # only if too few skills name every word.
        " every AS (SELECT s.id, s.search_head @@ (SELECT %s::tsquery) AS named FROM"
        f" {_SKILL} s WHERE (SELECT count(*) FROM named) < %s"
        f" AND s.search_vector @@ (SELECT %s::tsquery) AND {where} LIMIT %s),"
        # A rare word's matches, all of them, read only if too few skills hold every word.
        " hits AS (SELECT h.id, h.named, t.idf AS rare, 0 AS every FROM t"
        " CROSS JOIN LATERAL (SELECT s.id, s.search_head @@ (SELECT %s::tsquery) AS named"
        f" FROM {_SKILL} s WHERE t.rare AND (SELECT count(*) FROM named) < %s"
        " AND (SELECT count(*) FROM every) < %s"
        f" AND s.search_vector @@ t.q AND {where} LIMIT %s) h"
        " UNION ALL SELECT named.id, true, 0.0, 1 FROM named"
        " UNION ALL SELECT every.id, every.named, 0.0, 1 FROM every),"
        # One group per skill, not gathered with array_agg, whose per-group state made 2,000
        # matches spill to disk. The head is tested once per match, where its row is read
        # (when it was in TOAST, grouping by it and testing it after read it three times).
        " cand AS (SELECT hits.id FROM hits GROUP BY hits.id"
        # Ties (every skill holding all the words, say) keep those named for a word first.
        " ORDER BY greatest(sum(hits.rare), max(hits.every) * %s::float8) DESC,"
        " bool_or(hits.named) DESC LIMIT %s)"
        # Each candidate's statistics decompressed once (``|| '{}'`` makes a plain copy; every
        # ``->`` on the stored value would decompress it again: half the cost with four words).
        " SELECT x.id, x.slug, x.st -> 'l', (SELECT jsonb_agg(CASE WHEN NOT t.prefix"
        " THEN x.st -> 't' -> t.lexeme ELSE (SELECT jsonb_build_array("
        " sum((e.value ->> 0)::int), sum((e.value ->> 1)::int), sum((e.value ->> 2)::int))"
        " FROM jsonb_each(x.st -> 't') e WHERE starts_with(e.key, t.lexeme)) END"
        " ORDER BY t.ord) FROM t)"
        f" FROM cand c CROSS JOIN LATERAL (SELECT s.id, s.slug, s.search_terms || '{{}}' AS st"
        f" FROM {_SKILL} s WHERE s.id = c.id OFFSET 0) x"
    )
    # Prepared: with no word in sight the plan is the same for every query, so each connection
    # plans the statement once instead of for every search (about 1 ms of its 4-5).
    rows = db.fetch_all(sql, params)
    return _scored(rows, [t.weight for t in terms], slug_guess, limit)


def _scored(
    rows: Sequence[tuple[Any, ...]], idfs: Sequence[float], slug_guess: str, limit: int
) -> list[tuple[int, float]]:
    """(pk, score) of the ``limit`` best of ``(pk, slug, lengths, counts per word)`` rows by
    BM25F, an exact slug match ahead; the same on both databases."""
    scored = []
    for pk, slug, lengths, counts in rows:
        score = bm25f(_json(counts) or [None] * len(idfs), _json(lengths), idfs)
        if score > 0:
            scored.append((pk, score + (SLUG_BONUS if slug == slug_guess else 0.0)))
    scored.sort(key=lambda pair: (-pair[1], pair[0]))
    return scored[:limit]


# The embedded default (SQLite): every readable skill holding a word, at most this many.
_FALLBACK_CANDIDATES = 2000


def _rank_fallback(
    gate: Gate, words: QueryWords, slug_guess: str, limit: int
) -> list[tuple[int, float]]:
    """The same stems, counts, typo mapping and BM25F as PostgreSQL's, the skills found by
    ``LIKE`` over ``search_lexemes`` and the words counted among every skill the caller may
    read."""
    said = Counter(stem(word) for word in words.words)  # a stem said twice weighs twice
    stems = list(said)
    documents, held = _fallback_counts(gate, stems)
    prefixes = [False] * len(stems)
    typing = (
        words.last_is_prefix
        and stem(words.words[-1]) == stems[-1]
        and held[-1] == 0
        and len(stems[-1]) >= 3
    )
    vocabulary = (
        _readable_vocabulary(gate)
        if typing or any(n == 0 and len(s) >= 4 for s, n in zip(stems, held, strict=True))
        else {}
    )
    if typing:  # the last word, still being typed: the stems it begins
        held[-1] = sum(n for known, n in vocabulary.items() if known.startswith(stems[-1]))
        prefixes[-1] = held[-1] > 0
    weights: dict[tuple[str, bool], float] = {}  # two words for one stem: their IDFs summed
    unknown = [i for i, n in enumerate(held) if n == 0 and len(stems[i]) >= 4]
    for index, (lexeme, prefix) in enumerate(zip(stems, prefixes, strict=True)):
        if index in unknown:  # a typo: its nearest known word, as on PostgreSQL
            nearest = nearest_word(lexeme, vocabulary, at_least=TYPO_SIMILARITY)
            if nearest is not None:
                lexeme, held[index] = nearest, vocabulary[nearest]
        weight = idf(documents=documents, containing=min(held[index], documents))
        weights[lexeme, prefix] = weights.get((lexeme, prefix), 0.0) + weight * said[stems[index]]
    terms = list(weights)
    patterns = [
        "% " + _like_escape(lexeme) + (" %" if not prefix else "%") for lexeme, prefix in terms
    ]
    where, params = gate.sql("s")
    holds = " OR ".join("s.search_lexemes LIKE %s ESCAPE '\\'" for _ in terms)
    rows = db.fetch_all(
        f"SELECT s.id, s.slug, s.search_terms FROM {_SKILL} s WHERE {where}"  # noqa: S608 - names only
        f" AND ({holds}) LIMIT {_FALLBACK_CANDIDATES}",
        [*params, *patterns],
    )
    found = []
    for pk, slug, raw in rows:
        statistics = _json(raw)
        table = statistics.get("t", {})
        per_word: list[Any] = []
        for lexeme, prefix in terms:
            if prefix:
                begun = [c for key, c in table.items() if key.startswith(lexeme)]
                per_word.append([sum(c[i] for c in begun) for i in range(3)] if begun else None)
            else:
                per_word.append(table.get(lexeme))
        found.append((pk, slug, statistics.get("l", [0, 0, 0]), per_word))
    return _scored(found, list(weights.values()), slug_guess, limit)


def _fallback_counts(gate: Gate, stems: Sequence[str]) -> tuple[int, list[int]]:
    """How many skills the caller may read, and how many of them hold each stem."""
    readable, readable_params = gate.sql("r")
    holds = ["r.search_lexemes LIKE %s ESCAPE '\\'" for _ in stems]
    counts = db.fetch_all(
        f"SELECT count(*), {', '.join(f'coalesce(sum({h}), 0)' for h in holds)}"  # noqa: S608 - fixed conditions
        f" FROM {_SKILL} r WHERE {readable}",
        [*("% " + _like_escape(s) + " %" for s in stems), *readable_params],
    )[0]
    return int(counts[0]), [int(c) for c in counts[1:]]


def _readable_vocabulary(gate: Gate) -> dict[str, int]:
    """Each stem the readable skills hold, and how many hold it: PostgreSQL's vocabulary table,
    read from the skills themselves (only for a query word no readable skill holds whole: a
    prefix being typed, or a typo)."""
    readable, params = gate.sql("r")
    held: Counter[str] = Counter()
    for (text,) in db.fetch_all(
        f"SELECT r.search_lexemes FROM {_SKILL} r WHERE {readable}",  # noqa: S608 - names only
        params,
    ):
        held.update(set(text.split()))
    return dict(held)


def _json(value: Any) -> Any:
    """A JSON value as Python (Django hands jsonb and SQLite's JSON over as text)."""
    return json.loads(value) if isinstance(value, str) else value


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
