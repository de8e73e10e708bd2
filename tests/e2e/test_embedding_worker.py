"""Level 0 vectors computed by a real Celery worker over Redis, never by the request
(docs/search.md, "The embedding pipeline"): a skill saved over REST is found at once by its own
words while no worker runs, and has no vector; a worker started afterwards stores it, and from
then on Level 0 finds the skill by meaning too."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from skills_app.domain.descriptor import descriptor_text
from skills_app.encoder import embedding
from skills_app.models import RevisionEmbedding, SkillRevision
from tests.e2e.processes import (
    celery_beat,
    celery_worker,
    free_port,
    gunicorn,
    process_env,
    require_production_services,
    running,
    unique_queue,
)
from tests.factories import make_token, make_user, personal_ws, save
from tests.support import wait_until

SKILL = {
    "slug": "kiln-firing-log",
    "name": "Kiln firing log",
    "description": "Record each pottery kiln firing: cone, ramp schedule and the glaze results.",
    "instruction_body": "# Firing log\n\nWrite down the cone reached and how long it soaked.\n",
}


# No word of the skill, one meaning: found only through the stored vector.
OTHER_WORDS = "journal for ceramics baked in a furnace"


def wait_for_vector(revision_id: str, *, timeout: float, log: Path) -> RevisionEmbedding:
    """The revision's stored vector, once a worker has written it (polled)."""
    row: RevisionEmbedding = wait_until(
        RevisionEmbedding.objects.filter(revision__revision_id=revision_id).first,
        timeout,
        interval=0.2,
        message=lambda: f"no vector for {revision_id}:\n{log.read_text(errors='replace')[-3000:]}",
    )
    return row


def assert_vector_of(row: RevisionEmbedding, revision: SkillRevision) -> None:
    """The stored vector is the installed model's, of this revision's descriptor."""
    assert (row.model, row.model_version, row.dim) == (
        embedding.MODEL,
        embedding.model_version(),
        embedding.DIM,
    )
    encoder = embedding.encoder()
    assert encoder is not None
    text = descriptor_text(
        name=revision.name, description=revision.description, body=revision.instruction_body
    )
    stored = embedding.vector_from_bytes(bytes(row.vector))
    assert np.abs(stored - encoder.encode([text])[0]).max() < 1e-5


@pytest.mark.django_db(transaction=True)
def test_a_save_is_found_at_once_and_embedded_by_a_worker_started_later(tmp_path: Path) -> None:
    require_production_services()
    user = make_user("e2e-embedder")
    _, secret = make_token(user)
    queue = unique_queue()
    # No beat, so no sweep: the vector can only come from the message the save sent.
    env = process_env(XMEMO_TASK_QUEUE=queue)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    worker_log = tmp_path / "worker.log"
    with (
        running(gunicorn(port), env=env, ready_url=f"{base}/v1/schema", log=tmp_path / "web.log"),
        httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {secret}"}, timeout=30
        ) as api,
    ):
        saved = api.post("/v1/skills/save", json={"workspace": "e2e-embedder", **SKILL})
        assert saved.status_code == 201, saved.text
        revision_id = saved.json()["revision_id"]

        def level0(query: str) -> list[str]:
            found = api.get("/v1/recall", params={"query": query})
            assert found.status_code == 200, found.text
            return [r["slug"] for r in found.json()["data"]["results"]]

        # Its own words find it at once; words it does not hold find it only by meaning.
        assert level0("kiln firing")[:1] == [SKILL["slug"]]
        assert level0(OTHER_WORDS) == []
        time.sleep(1)  # a vector computed on the request path would have landed by now
        assert not RevisionEmbedding.objects.filter(revision__revision_id=revision_id).exists()

        with running(celery_worker(queue), env=env, log=worker_log):
            row = wait_for_vector(revision_id, timeout=120, log=worker_log)
            assert_vector_of(row, SkillRevision.objects.get(revision_id=revision_id))
        # The web processes see the new vector within a second or two (docs/search.md).
        wait_until(
            lambda: level0(OTHER_WORDS) == [SKILL["slug"]],
            30,
            interval=0.5,
            message="the stored vector never reached Level 0",
        )
    assert RevisionEmbedding.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_worker_sweeps_up_revisions_no_message_announced(tmp_path: Path) -> None:
    """Saved while nothing could take the message (here: in this process, where tasks run
    in-process and sends nothing): the periodic sweep, sent by beat, embeds them on a worker."""
    require_production_services()
    user = make_user("e2e-sweeper")
    revisions = [
        save(user, personal_ws(user), slug=f"swept-{n}", name=f"Swept {n}").revision
        for n in range(3)
    ]
    assert not RevisionEmbedding.objects.exists()
    queue = unique_queue()
    env = process_env(
        XMEMO_TASK_QUEUE=queue, XMEMO_OUTBOX_SWEEP_SECONDS="1", XMEMO_OUTBOX_GRACE_SECONDS="0"
    )
    worker_log = tmp_path / "worker.log"
    with (
        running(celery_worker(queue), env=env, log=worker_log),
        running(celery_beat(), env=env, log=tmp_path / "beat.log"),
    ):
        rows = [wait_for_vector(r.revision_id, timeout=120, log=worker_log) for r in revisions]
    for row, revision in zip(rows, revisions, strict=True):
        assert_vector_of(row, revision)
    assert RevisionEmbedding.objects.count() == 3
