"""Level 0's word ranking: whole words weighed by rarity, the name above the description above
the body, typos forgiven (docs/search.md).

PostgreSQL: the stored ``search_vector`` (name and slug A, description B, body C) and
``search_head`` (name, slug, description) of migration 0003, both GIN-indexed, and the
per-workspace vocabulary of migration 0013. A skill scores, for every query word it holds,
the word's IDF among the skills the caller may read — once if the word is anywhere in it, and
again in part when the word is in its name or slug (all of it) or its description (half). Only
the small inline head vector is read to rank; the large body vector only decides matching,
through its index. A word is matched whole (stemmed: "rollbacks" finds "rollback"); the last
word of a query still being typed also as a prefix. A word no readable skill holds stands for
the nearest word some skill does hold (trigram similarity over the vocabulary).

Every word looks at PER_WORD_CAP matching skills at most, and skills holding all the words at
most as many again, so one very common word costs a bounded amount however large the registry
grows: the best of a common word's matches are found through the rarer words beside it, or
through meaning (``semantic``).

SQLite (the embedded default): the same words and weights, scored in Python over substring
candidates. Good enough for a demo-sized registry; production runs PostgreSQL.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection

from ...domain.search_text import QueryWords, idf
from ...infra import db
from ...models import Skill
from .gate import Gate

_SKILL = Skill._meta.db_table
PER_WORD_CAP = 2000
CANDIDATES = 200
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
    workspaces; an unknown word replaced by its nearest known one."""
    last = len(words.words) - 1
    rows = db.fetch_all(
        "WITH w AS (SELECT w.ord::int AS ord, v.lexeme"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS w(word, ord),"
        " unnest(to_tsvector('english', w.word)) v)"
        " SELECT w.ord, w.lexeme,"
        " (SELECT coalesce(sum(t.df), 0) FROM skills_app_searchterm t"
        "   WHERE t.workspace_id = ANY(%s) AND t.lexeme = w.lexeme),"
        " CASE WHEN w.ord = %s AND %s THEN (SELECT coalesce(sum(t.df), 0)"
        "   FROM skills_app_searchterm t WHERE t.workspace_id = ANY(%s)"
        "   AND t.lexeme LIKE replace(replace(w.lexeme, '%%', ''), '_', '\\_') || '%%') END,"
        " (SELECT coalesce(sum(t.df), 0) FROM skills_app_searchterm t"
        "   WHERE t.workspace_id = ANY(%s) AND t.lexeme = '')"
        " FROM w ORDER BY w.ord",
        [
            list(words.words),
            list(gate.workspace_ids),
            last + 1,
            words.last_is_prefix,
            list(gate.workspace_ids),
            list(gate.workspace_ids),
        ],
        prepare=False,
    )
    documents = max((row[4] for row in rows), default=0)
    terms: list[_Term] = []
    for _, lexeme, df, prefix_df, _ in rows:
        prefix = prefix_df is not None and prefix_df > df
        if df == 0 and not prefix:
            lexeme = _nearest_known(gate, lexeme)
            if lexeme is None:
                continue
            df = _df(gate, lexeme)
        count = min(prefix_df, documents) if prefix else df
        quoted = "'" + lexeme.replace("'", "''") + "'"
        terms.append(
            _Term(
                query=quoted + (":*" if prefix else ""),
                lexeme=lexeme,
                prefix=prefix,
                weight=idf(documents=max(documents, count), containing=count),
            )
        )
    # One lexeme from two words (e.g. "deploy" and "deploying") counts once.
    unique: dict[str, _Term] = {}
    for term in terms:
        unique.setdefault(term.query, term)
    return list(unique.values())


def _nearest_known(gate: Gate, lexeme: str) -> str | None:
    if len(lexeme) < 4:  # too short to tell a typo from another word
        return None
    rows = db.fetch_all(
        "SELECT t.lexeme FROM skills_app_searchterm t"
        " WHERE t.workspace_id = ANY(%s) AND t.df > 0 AND t.lexeme %% %s AND t.lexeme <> ''"
        " AND similarity(t.lexeme, %s) >= %s"
        " GROUP BY t.lexeme ORDER BY max(similarity(t.lexeme, %s)) DESC, sum(t.df) DESC"
        " LIMIT 1",
        [list(gate.workspace_ids), lexeme, lexeme, TYPO_SIMILARITY, lexeme],
        prepare=False,
    )
    return rows[0][0] if rows else None


def _df(gate: Gate, lexeme: str) -> int:
    rows = db.fetch_all(
        "SELECT coalesce(sum(df), 0) FROM skills_app_searchterm"
        " WHERE workspace_id = ANY(%s) AND lexeme = %s",
        [list(gate.workspace_ids), lexeme],
    )
    return int(rows[0][0])


def _rank_postgresql(
    gate: Gate, terms: Sequence[_Term], slug_guess: str, limit: int
) -> list[tuple[int, float]]:
    where, gate_params = gate.sql("s")
    n = len(terms)
    params: list[object] = [
        list(range(n)),
        [t.query for t in terms],
        [t.weight for t in terms],
        [f"{t.query}{'' if t.prefix else ':'}A" for t in terms],
        [f"{t.query}{'' if t.prefix else ':'}B" for t in terms],
    ]
    every = ""
    if n > 1:
        every = (
            " UNION SELECT a.id, t.i FROM (SELECT s.id FROM"  # noqa: S608 - names only
            f" {_SKILL} s WHERE s.search_vector @@ %s::tsquery AND {where} LIMIT %s) a"
            " CROSS JOIN t"
        )
    sql = (
        "WITH t(i, q, idf, qa, qb) AS"  # noqa: S608 - table and column names only; values are parameters
        " (SELECT * FROM unnest(%s::int[], %s::text[], %s::float8[], %s::text[], %s::text[])),"
        " hits AS (SELECT h.id, t.i FROM t CROSS JOIN LATERAL"
        f" (SELECT s.id FROM {_SKILL} s WHERE s.search_vector @@ t.q::tsquery AND {where}"
        f" LIMIT %s) h{every}),"
        " cand AS (SELECT hits.id, sum(t.idf) AS anywhere FROM hits JOIN t ON t.i = hits.i"
        " GROUP BY hits.id ORDER BY anywhere DESC LIMIT %s)"
        " SELECT c.id, c.anywhere + (SELECT coalesce(sum(t.idf * ("
        f" {NAME_WEIGHT} * (s.search_head @@ t.qa::tsquery)::int"
        f" + {DESCRIPTION_WEIGHT} * (s.search_head @@ t.qb::tsquery)::int)), 0) FROM t)"
        " + CASE WHEN s.slug = %s THEN 1.0 ELSE 0.0 END AS score"
        f" FROM cand c JOIN {_SKILL} s ON s.id = c.id ORDER BY score DESC, s.id LIMIT %s"
    )
    params += [*gate_params, PER_WORD_CAP]
    if n > 1:
        params += [" & ".join(t.query for t in terms), *gate_params, PER_WORD_CAP]
    params += [CANDIDATES, slug_guess, limit]
    return [(pk, float(score)) for pk, score in db.fetch_all(sql, params, prepare=False)]


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
    rows = db.fetch_all(
        "SELECT s.id, s.slug, s.search_name, s.search_description, s.search_body"  # noqa: S608 - names only
        f" FROM {_SKILL} s WHERE {where} AND ({' OR '.join(likes)})"
        f" LIMIT {_FALLBACK_CANDIDATES}",
        params,
    )
    last = len(words.words) - 1
    patterns = [
        re.compile(r"\b" + re.escape(w) + ("" if i == last and words.last_is_prefix else r"\b"))
        for i, w in enumerate(words.words)
    ]
    docs = [
        (pk, slug, f"{name} {slug.replace('-', ' ')}".lower(), description.lower(), body.lower())
        for pk, slug, name, description, body in rows
    ]
    documents = max(len(docs), 1)
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
