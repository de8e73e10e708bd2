"""Level 0's word ranking: whole words weighed by rarity, the name above the description above
the body, typos forgiven (docs/search.md, *By words*).

PostgreSQL: the GIN-indexed ``search_vector`` and ``search_head`` of migration 0003 and the
per-workspace vocabulary of 0014. A skill scores each query word it holds by the word's IDF
among the skills the caller may read, more in its name or description; stemmed whole words,
the last word also as a prefix, an unknown word as its nearest known one. Candidates come from
the rarest words within ``MATCH_BUDGET`` and ``EVERY_WORD_BUDGET``, so a query's cost is bounded
however large the registry. SQLite: the same words and weights, scored in Python."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection

from skills_app.domain.search_text import QueryWords, idf
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
# What a word adds beyond being anywhere in the skill, as a share of its IDF.
NAME_WEIGHT = 1.0
DESCRIPTION_WEIGHT = 0.5
# A typo stands for a vocabulary word at least this similar (pg_trgm similarity).
TYPO_SIMILARITY = 0.45


@dataclass(frozen=True)
class _Term:
    query: str  # a tsquery: one lexeme, maybe a prefix
    lexeme: str
    prefix: bool
    documents: int  # readable skills holding it
    weight: float  # IDF


def rank(*, gate: Gate, words: QueryWords, slug_guess: str, limit: int) -> list[tuple[int, float]]:
    """(skill pk, score) of the best word matches, best first."""
    if not gate.workspace_ids or not words.words:
        return []
    if connection.vendor == "postgresql":
        terms = _terms(gate, words)
        return _rank_postgresql(gate, terms, slug_guess, limit) if terms else []
    return _rank_fallback(gate, words, slug_guess, limit)


def _terms(gate: Gate, words: QueryWords) -> list[_Term]:
    """Each word's lexeme (stemmed by the English configuration) and IDF over the readable
    workspaces. A word no readable skill holds is, if it is the last word being typed, a prefix
    of the words that some do; else it stands for its nearest known word, if one is near."""
    readable = list(gate.workspace_ids)
    rows = db.fetch_all(
        "WITH w AS (SELECT w.ord::int AS ord, v.lexeme"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS w(word, ord),"
        " unnest(to_tsvector('english', w.word)) v)"
        " SELECT w.ord, w.lexeme, (SELECT coalesce(sum(t.df), 0) FROM skills_app_searchterm t"
        "   WHERE t.workspace_id = ANY(%s) AND t.lexeme = w.lexeme)"
        " FROM w UNION ALL SELECT 0, '', (SELECT coalesce(sum(t.df), 0)"
        "   FROM skills_app_searchterm t WHERE t.workspace_id = ANY(%s) AND t.lexeme = '')"
        " ORDER BY 1",
        [list(words.words), readable, readable],
    )
    documents = int(rows[0][2])
    last = len(words.words)
    terms: dict[str, _Term] = {}  # one lexeme from two words ("deploy", "deploying") counts once
    for ord_, lexeme, df in rows[1:]:
        prefix = False
        if df == 0:
            if ord_ == last and words.last_is_prefix and len(lexeme) >= 3:
                df = _vocabulary_df(gate, "t.lexeme LIKE %s", _like_prefix(lexeme))
                prefix = df > 0
            if not prefix:
                nearest = _nearest_known(gate, lexeme)
                if nearest is None:
                    continue
                lexeme, df = nearest
        query = "'" + lexeme.replace("'", "''") + "'" + (":*" if prefix else "")
        count = min(int(df), documents)
        terms.setdefault(
            query,
            _Term(
                query=query,
                lexeme=lexeme,
                prefix=prefix,
                documents=count,
                weight=idf(documents=documents, containing=count),
            ),
        )
    return list(terms.values())


def _like_prefix(lexeme: str) -> str:
    escaped = lexeme.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"


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
    gate: Gate, terms: Sequence[_Term], slug_guess: str, limit: int
) -> list[tuple[int, float]]:
    where, gate_params = gate.sql("s")
    rare = _rarest_within_budget(terms)
    params: list[object] = [
        [t.query for t in terms],
        [t.weight for t in terms],
        [f"{t.query}{'' if t.prefix else ':'}A" for t in terms],
        [f"{t.query}{'' if t.prefix else ':'}B" for t in terms],
        rare,
        *gate_params,
        MATCH_BUDGET,
        # Skills holding every word (for one word: all of its matches, up to the budget).
        " & ".join(t.query for t in terms),
        *gate_params,
        EVERY_WORD_BUDGET,
        # What a skill holding every word scores for being anywhere: every word's IDF.
        sum(t.weight for t in terms),
        " | ".join(t.query for t in terms),
        CANDIDATES,
        slug_guess,
        limit,
    ]
    # Each match arrives once per way it was found, with its slug and small name/description
    # vector: a rare word's match carries that word's IDF, a match of all the words the flag
    # that it holds them all. The queries are typed once (tsquery[]), not cast per row. The
    # planner sees no word (the rare ones come from ``t``, all of them through a sub-select): told
    # that a word is common, it read the table from its start, testing each row's large word
    # vector until EVERY_WORD_BUDGET matched — 110-150 ms for one common word at 100,000
    # skills, where the word index answers in 10.
    sql = (
        "WITH t(q, idf, qa, qb, rare) AS"  # noqa: S608 - table and column names only; values are parameters
        " (SELECT * FROM unnest(%s::tsquery[], %s::float8[], %s::tsquery[], %s::tsquery[],"
        " %s::bool[])),"
        # A rare word's matches, all of them (a common word's are found with the others).
        " hits AS (SELECT h.id, h.slug, h.head, t.idf AS rare, 0 AS every FROM t"
        " CROSS JOIN LATERAL (SELECT s.id, s.slug, s.search_head AS head"
        f" FROM {_SKILL} s WHERE t.rare AND s.search_vector @@ t.q AND {where} LIMIT %s) h"
        " UNION ALL SELECT a.id, a.slug, a.head, 0.0, 1 FROM"
        f" (SELECT s.id, s.slug, s.search_head AS head FROM {_SKILL} s"
        f" WHERE s.search_vector @@ (SELECT %s::tsquery) AND {where} LIMIT %s) a),"
        # One group per skill (its slug and head come with its id): grouped by them, not
        # gathered with array_agg, whose per-group state made 2,000 matches spill to disk.
        " cand AS (SELECT hits.id, hits.slug, hits.head,"
        " greatest(sum(hits.rare), max(hits.every) * %s::float8) AS anywhere"
        " FROM hits GROUP BY hits.id, hits.slug, hits.head"
        # Ties (every skill holding all the words, say) keep those named for a word first.
        " ORDER BY anywhere DESC, hits.head @@ %s::tsquery DESC LIMIT %s)"
        " SELECT c.id, c.anywhere + (SELECT coalesce(sum(t.idf * ("
        f" {NAME_WEIGHT} * (c.head @@ t.qa)::int + {DESCRIPTION_WEIGHT} * (c.head @@ t.qb)::int)),"
        " 0) FROM t) + CASE WHEN c.slug = %s THEN 1.0 ELSE 0.0 END AS score"
        " FROM cand c ORDER BY score DESC, c.id LIMIT %s"
    )
    # Prepared: with no word in sight the plan is the same for every query, so each connection
    # plans the statement once instead of for every search (about 1 ms of its 4-5).
    return [(pk, float(score)) for pk, score in db.fetch_all(sql, params)]


# The embedded default (SQLite): candidates by substring, the same weights in Python.
_FALLBACK_CANDIDATES = 2000


def _rank_fallback(
    gate: Gate, words: QueryWords, slug_guess: str, limit: int
) -> list[tuple[int, float]]:
    where, params = gate.sql("s")
    likes = []
    for word in words.words:
        like = "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        likes.append(
            "(lower(s.search_name) LIKE %s ESCAPE '\\' OR s.slug LIKE %s ESCAPE '\\'"
            " OR lower(s.search_description) LIKE %s ESCAPE '\\'"
            " OR lower(s.search_body) LIKE %s ESCAPE '\\')"
        )
        params.extend([like] * 4)
    # Rarity is counted among every skill the caller may read, as on PostgreSQL, not among the
    # candidates: a word that every candidate holds is still rare if few readable skills do.
    readable, readable_params = gate.sql("r")
    rows = db.fetch_all(
        "SELECT s.id, s.slug, s.search_name, s.search_description, s.search_body,"  # noqa: S608 - names only
        f" (SELECT count(*) FROM {_SKILL} r WHERE {readable})"
        f" FROM {_SKILL} s WHERE {where} AND ({' OR '.join(likes)})"
        f" LIMIT {_FALLBACK_CANDIDATES}",
        [*readable_params, *params],
    )
    last = len(words.words) - 1
    patterns = [
        re.compile(r"\b" + re.escape(w) + ("" if i == last and words.last_is_prefix else r"\b"))
        for i, w in enumerate(words.words)
    ]
    docs = [
        (pk, slug, f"{name} {slug.replace('-', ' ')}".lower(), description.lower(), body.lower())
        for pk, slug, name, description, body, _ in rows
    ]
    documents = rows[0][5] if rows else 1
    weights = [
        idf(documents=documents, containing=sum(1 for d in docs if p.search(" ".join(d[2:]))))
        for p in patterns
    ]
    scored = []
    for pk, slug, head, description, body in docs:
        score = 0.0
        for pattern, weight in zip(patterns, weights, strict=True):
            in_head, in_description = bool(pattern.search(head)), bool(pattern.search(description))
            if in_head or in_description or pattern.search(body):
                score += weight * (1 + NAME_WEIGHT * in_head + DESCRIPTION_WEIGHT * in_description)
        if score > 0:
            scored.append((pk, score + (1.0 if slug == slug_guess else 0.0)))
    scored.sort(key=lambda pair: (-pair[1], pair[0]))
    return scored[:limit]
