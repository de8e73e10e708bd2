"""Level 0's meaning ranking: the query's embedding against each skill's stored one.

The vectors live in ``RevisionEmbedding`` (computed by workers after save). Each process keeps
per workspace a faiss index of the vectors Level 0 may show there: exact up to ``EXACT_LIMIT``,
IVF above. On PostgreSQL it checks for changes at most every ``CHECK_SECONDS`` (the
``search_updated_at`` stamps of migration 0014) and rebuilds every ``REBUILD_SECONDS``, in the
search that finds it missing or due (no background build); a stale index can cost a hit, never
leak one (every proposal passes the search gate again). On SQLite nothing is cached. Figures,
and when one tenant outgrows a process: docs/search.md."""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.db import connection

from skills_app.encoder import embedding
from skills_app.infra import db
from skills_app.models import RevisionEmbedding, Skill
from skills_app.selectors.search.gate import Gate

if TYPE_CHECKING:
    import numpy as np

_SKILL = Skill._meta.db_table
_EMBEDDING = RevisionEmbedding._meta.db_table
EXACT_LIMIT = 20_000
NPROBE = 16
# IVF training (k-means) runs on at most this many vectors per list: faiss asks for 39 or more;
# all 100,000 vectors of a large workspace took 7 of a build's 10 seconds.
TRAIN_PER_LIST = 64
CHECK_SECONDS = 1.0
REBUILD_SECONDS = 600.0
# Transactions that commit out of order: a change stamped up to this long before the newest
# stamp seen may still become visible later.
COMMIT_MARGIN = timedelta(seconds=60)
# Cosine below which a skill is not "about" the query at all (all-MiniLM-L6-v2: unrelated
# texts score about 0 to 0.15): the ranking still proposes it, for the fusion's standard scores,
# but Level 0 answers it only if the words found it too (``search_gated``).
MIN_SIMILARITY = 0.2
# Vectors kept per process over all workspaces (384 float32 each: 1.5 KiB).
MAX_CACHED_VECTORS = 400_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

logger = logging.getLogger("skills_app.search")


def embed_query(text: str) -> Future[np.ndarray] | None:
    """The query's embedding, computed on a helper thread while the caller goes on (ONNX
    Runtime leaves the interpreter lock while it runs the encoder, so the word ranking's query
    runs meanwhile); None when no model is installed."""
    if embedding.query_encoder() is None:
        return None
    return _EMBEDDER.submit(query_vector, text)


def rank(
    *,
    gate: Gate,
    query: np.ndarray,
    limit: int,
    stand_in: tuple[int, np.ndarray | None] | None = None,
) -> list[tuple[int, float]]:
    """(skill pk, cosine) of the skills nearest in meaning to the query's embedding, best
    first. ``stand_in`` (a skill's pk, a vector or None) replaces that skill's stored vector:
    a trigger check's revision standing in for its skill (docs/contract.md §22)."""
    if not gate.workspace_ids:
        return []
    wanted = limit + (stand_in is not None)
    found: list[tuple[int, float]] = []
    if connection.vendor != "postgresql":
        found = _rank_uncached(gate, query, wanted)
    else:
        for workspace_id in gate.workspace_ids:
            found += _CACHE.index(workspace_id, gate).search(query, wanted)
    if stand_in is not None:
        pk, vector = stand_in
        found = [pair for pair in found if pair[0] != pk]
        if vector is not None:
            found.append((pk, float(vector @ query)))
    found.sort(key=lambda pair: -pair[1])
    return found[:limit]


_EMBEDDER = ThreadPoolExecutor(max_workers=2, thread_name_prefix="xmemo-embed")


@functools.lru_cache(maxsize=2048)
def _query_vector_cached(text: str) -> bytes:
    model = embedding.query_encoder()
    assert model is not None
    return embedding.vector_bytes(model.encode([text])[0])


def query_vector(text: str) -> np.ndarray:
    """The query's embedding; repeated queries are answered from a per-process cache."""
    return embedding.vector_from_bytes(_query_vector_cached(text))


def _eligible_sql(alias: str = "s") -> str:
    """What the index holds of a workspace: what Level 0 may show there to anyone (agents'
    ``invoke.model`` and membership are the gate's business, at answer time)."""
    return (
        f"{alias}.status = 'active' AND {alias}.current_revision_id IS NOT NULL"
        f" AND ({alias}.published_revision_id IS NOT NULL OR %s)"
    )


def _rank_uncached(gate: Gate, query: np.ndarray, limit: int) -> list[tuple[int, float]]:
    import numpy as np

    where, params = gate.sql("s")
    rows = db.fetch_all(
        f"SELECT s.id, e.vector FROM {_SKILL} s JOIN {_EMBEDDING} e"  # noqa: S608 - names only
        " ON e.revision_id = s.current_revision_id AND e.model = %s"
        f" WHERE {where}",
        [embedding.MODEL, *params],
    )
    if not rows:
        return []
    # One buffer for all the rows, not an array per row stacked: half the time at 1,000 skills.
    matrix = embedding.vector_from_bytes(b"".join(bytes(vector) for _, vector in rows))
    matrix = matrix.reshape(len(rows), embedding.DIM)
    scores = matrix @ query
    order = np.argsort(-scores)[:limit]
    return [(rows[i][0], float(scores[i])) for i in order]


@dataclass
class _Index:
    """One workspace's vectors in a faiss index keyed by skill pk."""

    workspace_id: int
    index: Any = None
    size: int = 0
    built_at: float = 0.0
    checked_at: float = 0.0
    stamp: datetime | None = None  # newest search_updated_at seen
    last_embedding: int = 0  # newest embedding id seen
    lock: threading.Lock = field(default_factory=threading.Lock)

    def search(self, query: np.ndarray, limit: int) -> list[tuple[int, float]]:
        if self.index is None or self.size == 0:
            return []
        scores, ids = self.index.search(query.reshape(1, -1), min(limit, self.size))
        return [(int(pk), float(s)) for pk, s in zip(ids[0], scores[0], strict=True) if pk >= 0]


class _Cache:
    def __init__(self) -> None:
        self._indexes: OrderedDict[int, _Index] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._indexes.clear()

    def index(self, workspace_id: int, gate: Gate) -> _Index:
        with self._lock:
            entry = self._indexes.get(workspace_id)
            if entry is None:
                entry = self._indexes[workspace_id] = _Index(workspace_id)
            self._indexes.move_to_end(workspace_id)
        fallback = workspace_id in gate.fallback_ids
        now = time.monotonic()
        if now - entry.checked_at >= CHECK_SECONDS:
            with entry.lock:
                if now - entry.checked_at >= CHECK_SECONDS:
                    _refresh(entry, fallback, now)
            self._evict()
        return entry

    def _evict(self) -> None:
        with self._lock:
            total = sum(e.size for e in self._indexes.values())
            while total > MAX_CACHED_VECTORS and len(self._indexes) > 1:
                _, oldest = self._indexes.popitem(last=False)
                total -= oldest.size


_CACHE = _Cache()


def clear_cache() -> None:
    """Forget every cached index (tests; a process that changed models)."""
    _CACHE.clear()
    _query_vector_cached.cache_clear()


def _refresh(entry: _Index, fallback: bool, now: float) -> None:
    [(stamp, last_embedding)] = db.fetch_all(
        f"SELECT (SELECT max(search_updated_at) FROM {_SKILL} WHERE workspace_id = %s),"  # noqa: S608 - names only
        f" (SELECT coalesce(max(id), 0) FROM {_EMBEDDING})",
        [entry.workspace_id],
    )
    entry.checked_at = now
    if entry.index is None or now - entry.built_at >= REBUILD_SECONDS:
        # Built in the search that finds it missing or due: a selector starts no background
        # work. A large workspace's first search in a process waits for it (docs/search.md).
        _build(entry, fallback, stamp, last_embedding, now)
    elif stamp != entry.stamp or last_embedding != entry.last_embedding:
        _update(entry, fallback, stamp, last_embedding)


def _build(
    entry: _Index, fallback: bool, stamp: datetime | None, last_embedding: int, now: float
) -> None:
    import faiss
    import numpy as np

    rows = db.fetch_all(
        f"SELECT s.id, e.vector FROM {_SKILL} s JOIN {_EMBEDDING} e"  # noqa: S608 - names only
        " ON e.revision_id = s.current_revision_id AND e.model = %s"
        f" WHERE s.workspace_id = %s AND {_eligible_sql()}",
        [embedding.MODEL, entry.workspace_id, fallback],
        prepare=False,
    )
    ids = np.array([pk for pk, _ in rows], dtype=np.int64)
    vectors = np.stack(
        [embedding.vector_from_bytes(bytes(v)) for _, v in rows]
        or [np.zeros(embedding.DIM, dtype=np.float32)]
    )[: len(rows)]
    faiss.omp_set_num_threads(1)  # web processes: one request, one core
    index: Any
    if len(rows) > EXACT_LIMIT:
        lists = int(len(rows) ** 0.5)
        quantizer = faiss.IndexFlatIP(embedding.DIM)
        index = faiss.IndexIVFFlat(quantizer, embedding.DIM, lists, faiss.METRIC_INNER_PRODUCT)
        index.train(training_sample(vectors, lists))
        index.nprobe = NPROBE
    else:
        index = faiss.IndexIDMap2(faiss.IndexFlatIP(embedding.DIM))
    if len(rows):
        index.add_with_ids(vectors, ids)
    entry.index, entry.size = index, len(rows)
    entry.built_at, entry.stamp, entry.last_embedding = now, stamp, last_embedding
    logger.info("Vector index of workspace %s: %d vectors", entry.workspace_id, len(rows))


def training_sample(vectors: np.ndarray, lists: int) -> np.ndarray:
    """What an IVF index of ``lists`` lists is trained on: all ``vectors``, or a sample of
    TRAIN_PER_LIST per list, the same for the same vectors (a seeded draw)."""
    import numpy as np

    size = TRAIN_PER_LIST * lists
    if len(vectors) <= size:
        return vectors
    chosen = np.random.default_rng(0).choice(len(vectors), size=size, replace=False)
    sample: np.ndarray = vectors[np.sort(chosen)]
    return sample


def _update(entry: _Index, fallback: bool, stamp: datetime | None, last_embedding: int) -> None:
    import numpy as np

    since = entry.stamp - COMMIT_MARGIN if entry.stamp else _EPOCH
    rows = db.fetch_all(
        f"SELECT s.id, e.vector, {_eligible_sql()} FROM {_SKILL} s"  # noqa: S608 - names only
        f" LEFT JOIN {_EMBEDDING} e ON e.revision_id = s.current_revision_id AND e.model = %s"
        " WHERE s.workspace_id = %s AND (s.search_updated_at > %s OR s.current_revision_id IN"
        f" (SELECT revision_id FROM {_EMBEDDING} WHERE id > %s))",
        [fallback, embedding.MODEL, entry.workspace_id, since, entry.last_embedding],
        prepare=False,
    )
    if rows:
        ids = np.array([pk for pk, _, _ in rows], dtype=np.int64)
        entry.index.remove_ids(ids)
        keep = [(pk, bytes(v)) for pk, v, eligible in rows if eligible and v is not None]
        if keep:
            entry.index.add_with_ids(
                np.stack([embedding.vector_from_bytes(v) for _, v in keep]),
                np.array([pk for pk, _ in keep], dtype=np.int64),
            )
        entry.size = int(entry.index.ntotal)
    entry.stamp, entry.last_embedding = stamp, last_embedding
