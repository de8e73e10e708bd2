"""``/metrics`` under gunicorn with two workers (docs/contract.md §19): Prometheus text behind
its own bearer token, counts adding up over the worker processes."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.processes import (
    free_port,
    gunicorn,
    process_env,
    require_production_services,
    running,
    unique_queue,
)
from tests.factories import make_token, make_user, personal_ws, publish

METRICS_TOKEN = "scrape-secret-0123456789"


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def _value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


@pytest.mark.django_db(transaction=True)
def test_metrics_need_their_token_and_add_up_across_workers(tmp_path: Path) -> None:
    require_production_services()
    user = make_user("scraped")
    _, secret = make_token(user)
    publish(user, personal_ws(user), slug="counted")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = process_env(
        XMEMO_METRICS_TOKEN=METRICS_TOKEN,
        ALLOWED_HOSTS="skills.example.com",
        XMEMO_TASK_QUEUE=unique_queue(),
    )
    with running(gunicorn(port), env=env, ready_url=f"{base}/healthz", log=tmp_path / "web.log"):
        auth = {"Authorization": f"Bearer {secret}", "Host": "skills.example.com"}
        for _ in range(24):  # a connection each: the two workers share them
            assert httpx.get(
                f"{base}/v1/recall", params={"slug": "counted"}, headers=auth
            ).is_success
        assert httpx.get(f"{base}/v1/skills/skill_nope", headers=auth).status_code == 404

        assert httpx.get(f"{base}/metrics").status_code == 401
        wrong = httpx.get(f"{base}/metrics", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        assert wrong.json()["error"]["code"] == "AUTHENTICATION_REQUIRED"
        # Scraped by address, as Prometheus does, past the host check.
        scraped = httpx.get(
            f"{base}/metrics",
            headers={"Authorization": f"Bearer {METRICS_TOKEN}", "Host": "10.0.0.9:8000"},
        )
        assert scraped.status_code == 200, scraped.text
        assert scraped.headers["Content-Type"].startswith("text/plain")
        samples = _samples(scraped.text)
        request = "xmemo_http_request_duration_seconds_count"
        assert _value(samples, request, route="v1/recall", method="GET", status="200") == 24
        assert (
            _value(samples, request, route="v1/skills/<str:skill_id>", method="GET", status="404")
            == 1
        )
        assert _value(samples, "xmemo_recalls_total", level="1", door="api") == 24
        assert _value(samples, "xmemo_jobs", kind="import", state="queued") == 0
        assert ("xmemo_jobs", (("kind", "export"), ("state", "succeeded"))) in samples
        assert _value(samples, "xmemo_outbox_backlog", outbox="jobs") == 0
        assert _value(samples, "xmemo_database_connections") >= 1
        assert ("xmemo_queue_depth", (("queue", env["XMEMO_TASK_QUEUE"]),)) in samples

    unset = process_env()
    unset.pop("XMEMO_METRICS_TOKEN", None)
    with running(gunicorn(port), env=unset, ready_url=f"{base}/healthz", log=tmp_path / "w2.log"):
        closed = httpx.get(f"{base}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
        assert closed.status_code == 404
