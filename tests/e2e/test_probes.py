"""Health and readiness against gunicorn (docs/contract.md §19): no token, no tenant data,
answered to a load balancer whatever Host it sends and over plain HTTP behind TLS."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.e2e.processes import (
    free_port,
    gunicorn,
    process_env,
    require_production_services,
    running,
)


@pytest.mark.django_db(transaction=True)
def test_healthz_and_readyz_answer_a_load_balancer_without_a_token(tmp_path: Path) -> None:
    require_production_services()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    # An HTTPS-only deployment on its public name: a probe comes over plain HTTP by address.
    env = process_env(
        ALLOWED_HOSTS="skills.example.com", XMEMO_SECURE_COOKIES="1", XMEMO_SSL_REDIRECT="1"
    )
    with running(gunicorn(port), env=env, ready_url=f"{base}/healthz", log=tmp_path / "web.log"):
        health = httpx.get(f"{base}/healthz", headers={"Host": "10.1.2.3:8000"})
        assert health.status_code == 200, health.text
        assert health.json() == {"status": "ok"}
        ready = httpx.get(f"{base}/readyz", headers={"Host": "10.1.2.3:8000"})
        assert ready.status_code == 200, ready.text
        assert ready.json() == {"status": "ok", "checks": {"database": "ok", "redis": "ok"}}
        # Everything else still gets the host check and the redirect to HTTPS.
        assert httpx.get(f"{base}/v1/schema", headers={"Host": "10.1.2.3"}).status_code == 400
        other = httpx.get(f"{base}/v1/schema", headers={"Host": "skills.example.com"})
        assert other.status_code == 301


@pytest.mark.django_db(transaction=True)
def test_readyz_names_the_database_it_cannot_reach(tmp_path: Path) -> None:
    require_production_services()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    dead = free_port()  # nothing listens there
    env = process_env(DATABASE_URL=f"postgres://postgres@127.0.0.1:{dead}/nowhere")
    with running(gunicorn(port), env=env, ready_url=f"{base}/healthz", log=tmp_path / "web.log"):
        assert httpx.get(f"{base}/healthz").json() == {"status": "ok"}
        ready = httpx.get(f"{base}/readyz", timeout=5)
        assert ready.status_code == 503, ready.text
        error = ready.json()["error"]
        assert error["code"] == "NOT_READY"
        assert error["details"] == {"failed": ["database"]}
        assert "database" in error["message"]
