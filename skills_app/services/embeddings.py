"""Level 0's semantic retrieval, the write side: each skill's current revision gets the vector of
its descriptor (``domain.descriptor``), off the request path, kept in ``RevisionEmbedding``.

``skills._refresh_pointers`` (the one place a current revision is decided) calls
``embedding_wanted``; after commit the revisions without a vector go to a worker by task name,
batched (``embeddings_batched`` for imports and restores); a failed hand-over, and the embedded
default (tasks in-process), leave them to the periodic sweep (a beat entry). Vectors are
computed outside any transaction and stored in a short one that locks the skills ``SKIP
LOCKED`` and inserts only what is still missing. Nothing runs while semantic search is off or
the model is missing. The pipeline in full: docs/search.md."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib.util
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.db.models.functions import Substr
from django.utils import timezone

from skills_app.domain.descriptor import DESCRIPTOR_BODY_READ, descriptor_text
from skills_app.encoder import embedding
from skills_app.infra.queue import (
    EMBED_REVISIONS,
    EVALS_REFRESH,
    hand_over,
    tasks_run_eagerly,
)
from skills_app.models import RevisionEmbedding, Skill, SkillRevision, Workspace

logger = logging.getLogger(__name__)

# Revisions per task message (an import of a large pack is several messages, so that jobs
# queued behind it are not held back for long).
TASK_BATCH = 100
# Revisions read, encoded and stored together.
ROUND = 100
# Texts per forward pass (each pass is padded to its longest text, so texts go by length).
# One at a time was fastest where measured (one BLAS thread, 2 cores: 90 ms a text of about 80
# word pieces against 190 ms in passes of 16); larger passes spill the caches.
ENCODE_CHUNK = 1
# The most revisions one sweep round embeds; a worker runs the next round at once while
# rounds come back full.
SWEEP_ROUND = 100
# pg_try_advisory_lock key of the sweep: one worker sweeps at a time, the others skip a round.
SWEEP_LOCK_KEY = 0x786D656D6F0E  # "xmemo" + 0x0E


@functools.cache
def _model_installed() -> bool:
    """Whether the model package is importable, without loading it (asked once a process: a
    model installed later takes a restart, as the encoder's own answer does)."""
    return importlib.util.find_spec(embedding.MODEL_PACKAGE.replace("-", "_")) is not None


def _switched_on() -> bool:
    return bool(getattr(settings, "XMEMO_SEMANTIC_SEARCH", True))


def embeddings_available() -> bool:
    """Whether vectors are wanted at all: semantic search on and the model installed."""
    return _switched_on() and _model_installed()


# --- after commit: handing revisions to a worker ----------------------------------------------

Wanted = tuple[int, str]  # a revision's pk (to look up) and public id (to send)

_collecting: contextvars.ContextVar[list[Wanted] | None] = contextvars.ContextVar(
    "xmemo_embeddings_batch", default=None
)


def embedding_wanted(revision: SkillRevision) -> None:
    """``revision`` is now its skill's current revision (inside the transaction that made it
    so): once that commits, it is embedded off the request path if it has no vector yet.
    Costs no query and sends nothing now."""
    if not _switched_on():
        return
    wanted = (revision.pk, revision.revision_id)
    batch = _collecting.get()
    if batch is not None:
        batch.append(wanted)
        return
    transaction.on_commit(lambda: embeddings_request([wanted]), robust=True)


@contextlib.contextmanager
def embeddings_batched() -> Iterator[None]:
    """Within a transaction: the revisions wanted inside the block are requested together,
    after commit (an import of a pack, a restore). Nothing is requested if the block raises."""
    batch: list[Wanted] = []
    token = _collecting.set(batch)
    try:
        yield
    finally:
        _collecting.reset(token)
    if batch:
        transaction.on_commit(lambda: embeddings_request(batch), robust=True)


def embeddings_request(revisions: Sequence[Wanted]) -> None:
    """After commit: hand the revisions still without a vector for the installed model to a
    worker (``infra.queue.hand_over``). Never raises — the save has committed, and the sweep
    catches up with whatever could not be handed over. Where tasks run in-process, the
    schedule's sweep embeds them (``make run``)."""
    try:
        if not embeddings_available() or tasks_run_eagerly():
            return
        wanted = dict(revisions)
        have = set(
            RevisionEmbedding.objects.filter(
                revision_id__in=wanted, model=embedding.MODEL
            ).values_list("revision_id", flat=True)
        )
    except Exception as exc:  # the database's own errors
        logger.warning("revisions not handed over for embedding yet (%s); the sweep will", exc)
        return
    missing = [revision_id for pk, revision_id in wanted.items() if pk not in have]
    step = TASK_BATCH
    hand_over(EMBED_REVISIONS, [[missing[i : i + step]] for i in range(0, len(missing), step)])


# --- computing and storing --------------------------------------------------------------------


@dataclass
class EmbedCounts:
    embedded: int = 0  # vectors stored where there was none
    reembedded: int = 0  # vectors of another model version replaced
    skipped: int = 0  # skills busy (being saved or deleted at that moment) or gone: left for later

    @property
    def stored(self) -> int:
        return self.embedded + self.reembedded


def _lacking(*, reembed: bool) -> Any:
    """Skills whose current revision has no vector for the installed model (``reembed``: or
    one of another model version)."""
    vectors = RevisionEmbedding.objects.filter(
        revision_id=OuterRef("current_revision_id"), model=embedding.MODEL
    )
    if reembed:
        vectors = vectors.filter(model_version=embedding.model_version())
    return ~Exists(vectors)


Row = tuple[int, str, str, str]  # revision pk, name, description, the start of the body


def _rows(skills: QuerySet[Skill], *, after: int, size: int) -> list[Row]:
    return list(
        skills.filter(current_revision_id__gt=after)
        .order_by("current_revision_id")
        .values_list(
            "current_revision_id",
            "current_revision__name",
            "current_revision__description",
            # Never more of a body (up to 6 MiB) than the descriptor reads.
            Substr("current_revision__instruction_body", 1, DESCRIPTOR_BODY_READ),
        )[:size]
    )


def _encode(encoder: embedding.Encoder, rows: list[Row]) -> dict[int, bytes]:
    texts = {
        pk: descriptor_text(name=name, description=description, body=body or "")
        for pk, name, description, body in rows
    }
    order = sorted(texts, key=lambda pk: len(texts[pk]))
    vectors: dict[int, bytes] = {}
    for start in range(0, len(order), ENCODE_CHUNK):
        chunk = order[start : start + ENCODE_CHUNK]
        encoded = encoder.encode([texts[pk] for pk in chunk])
        vectors.update(zip(chunk, map(embedding.vector_bytes, encoded), strict=True))
    return vectors


def _store(vectors: dict[int, bytes], *, reembed: bool, counts: EmbedCounts) -> None:
    version = embedding.model_version()
    with transaction.atomic():
        skill_of = dict(SkillRevision.objects.filter(pk__in=vectors).values_list("pk", "skill_id"))
        # A save or delete in progress holds its skill row: skip it rather than wait (and never
        # deadlock with an import that locks many skills in its own order). Once locked here,
        # the skill cannot be deleted under this insert.
        held = set(
            Skill.objects.filter(pk__in=set(skill_of.values()))
            .select_for_update(no_key=True, skip_locked=True)
            .values_list("pk", flat=True)
        )
        present = [pk for pk, skill in skill_of.items() if skill in held]
        existing = dict(
            RevisionEmbedding.objects.filter(
                revision_id__in=present, model=embedding.MODEL
            ).values_list("revision_id", "model_version")
        )
        new = [pk for pk in present if pk not in existing]
        stale = [pk for pk in present if reembed and existing.get(pk, version) != version]
        RevisionEmbedding.objects.bulk_create(
            [
                RevisionEmbedding(
                    revision_id=pk,
                    model=embedding.MODEL,
                    model_version=version,
                    dim=embedding.DIM,
                    vector=vectors[pk],
                )
                for pk in new
            ],
            ignore_conflicts=True,
        )
        now = timezone.now()
        for pk in stale:
            RevisionEmbedding.objects.filter(revision_id=pk, model=embedding.MODEL).update(
                model_version=version, dim=embedding.DIM, vector=vectors[pk], created_at=now
            )
    counts.embedded += len(new)
    counts.reembedded += len(stale)
    counts.skipped += len(vectors) - len(present)
    _checks_wanted({skill_of[pk] for pk in (*new, *stale)})


def _checks_wanted(skill_pks: set[int]) -> None:
    """A new vector changes what Level 0 ranks by, so the trigger checks of those skills'
    workspaces are brought up to date after commit (``services.evals``, docs/evals.md)."""
    workspaces = set(Skill.objects.filter(pk__in=skill_pks).values_list("workspace_id", flat=True))

    if workspaces:  # what the broker cannot take, the periodic catch-up finds
        messages = [[workspace_pk] for workspace_pk in sorted(workspaces)]
        transaction.on_commit(lambda: hand_over(EVALS_REFRESH, messages), robust=True)


def embeddings_catch_up(
    *,
    workspace: Workspace | None = None,
    revision_ids: Sequence[str] | None = None,
    reembed: bool = False,
    batch: int = ROUND,
    limit: int | None = None,
    grace_seconds: float = 0,
) -> EmbedCounts:
    """Embed the current revisions (of ``workspace``, or among ``revision_ids``) that have no
    vector for the installed model — with ``reembed``, also replace those of another model
    version — ``batch`` at a time, at most ``limit``; skills changed in the last
    ``grace_seconds`` are left to the task their commit sent. Idempotent. Does nothing when
    no model is available (the encoder says so once in the log)."""
    counts = EmbedCounts()
    if not _switched_on():
        return counts
    skills = Skill.objects.filter(current_revision__isnull=False).filter(_lacking(reembed=reembed))
    if workspace is not None:
        skills = skills.filter(workspace=workspace)
    if revision_ids is not None:
        skills = skills.filter(current_revision__revision_id__in=list(revision_ids))
    if grace_seconds:
        skills = skills.filter(updated_at__lt=timezone.now() - timedelta(seconds=grace_seconds))
    after, seen = 0, 0
    encoder: embedding.Encoder | None = None
    while limit is None or seen < limit:
        rows = _rows(skills, after=after, size=batch if limit is None else min(batch, limit - seen))
        if not rows:
            break
        # Loaded only once there is something to embed: an idle sweep never loads the model.
        encoder = encoder or embedding.encoder()
        if encoder is None:
            break
        after, seen = rows[-1][0], seen + len(rows)
        _store(_encode(encoder, rows), reembed=reembed, counts=counts)
    return counts


def embeddings_compute(*, revision_ids: Sequence[str]) -> int:
    """The task's work: embed those of ``revision_ids`` that are still current and have no
    vector yet. Answers how many vectors it stored."""
    return embeddings_catch_up(revision_ids=revision_ids).stored


@contextlib.contextmanager
def _sweep_lock() -> Iterator[bool]:
    """One sweeping worker at a time (PostgreSQL advisory lock, released at the end or with
    the connection); SQLite has one process anyway."""
    if connection.vendor != "postgresql":
        yield True
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [SWEEP_LOCK_KEY])
        held = bool(cursor.fetchone()[0])
    try:
        yield held
    finally:
        if held:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [SWEEP_LOCK_KEY])


def embeddings_sweep(*, budget_seconds: float = 0) -> int:
    """The periodic catch-up: rounds of at most ``SWEEP_ROUND`` current revisions without a
    vector, while rounds come back full and ``budget_seconds`` last. Revisions saved in the last
    ``XMEMO_OUTBOX_GRACE_SECONDS`` are left to the task their commit sent (where tasks run
    in-process none is sent, so none is left). One process sweeps at a time; answers how many
    vectors it stored."""
    if not embeddings_available():
        return 0
    grace = 0.0 if tasks_run_eagerly() else float(settings.XMEMO_OUTBOX_GRACE_SECONDS)
    deadline = time.monotonic() + budget_seconds
    stored = 0
    with _sweep_lock() as held:
        while held:
            done = embeddings_catch_up(limit=SWEEP_ROUND, grace_seconds=grace).stored
            stored += done
            held = done >= SWEEP_ROUND and time.monotonic() < deadline
    return stored
