"""docker/compose.yml, docker/nginx.conf and the Dockerfile checked rule by rule (no Docker
engine here): health checks everywhere, one public entry, TLS forwarded, migrations first,
static files in the image, secrets from files or the environment (docs/operations.md)."""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCKER = ROOT / "docker"
APP_SERVICES = ("web", "mcp", "worker", "worker-execute", "worker-scan")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((DOCKER / "compose.yml").read_text(encoding="utf-8"))


def _services(compose: dict[str, Any]) -> dict[str, Any]:
    return compose["services"]


def test_every_long_running_service_has_a_health_check(compose: dict[str, Any]) -> None:
    for name, service in _services(compose).items():
        if name == "migrate":
            continue
        check = service.get("healthcheck")
        assert check, f"{name} has no health check"
        assert check["test"][0] in ("CMD", "CMD-SHELL"), name
        assert check.get("interval"), name
    probes = {
        name: " ".join(_services(compose)[name]["healthcheck"]["test"]) for name in ("web", "mcp")
    }
    assert "/readyz" in probes["web"]
    assert ":8000/" in probes["web"]
    assert "/readyz" in probes["mcp"]
    assert ":8001/" in probes["mcp"]
    for worker in ("worker", "worker-execute", "worker-scan"):
        assert "inspect ping" in " ".join(_services(compose)[worker]["healthcheck"]["test"])


def test_the_proxy_is_the_one_public_entry(compose: dict[str, Any]) -> None:
    published = [name for name, service in _services(compose).items() if service.get("ports")]
    assert published == ["proxy"]
    proxy = _services(compose)["proxy"]
    for upstream in ("web", "mcp"):
        assert proxy["depends_on"][upstream]["condition"] == "service_healthy"


def test_migrations_run_once_before_everything_else(compose: dict[str, Any]) -> None:
    services = _services(compose)
    migrate = services["migrate"]
    assert migrate["command"][:3] == ["python", "manage.py", "migrate"]
    assert migrate["restart"] == "no"
    assert migrate["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert migrate["depends_on"]["redis"]["condition"] == "service_healthy"
    for name in APP_SERVICES:
        assert services[name]["depends_on"]["migrate"]["condition"] == (
            "service_completed_successfully"
        ), name


def test_postgresql_keeps_the_skills_in_its_own_buffers(compose: dict[str, Any]) -> None:
    """Not the default 128 MB (docs/production.md, *PostgreSQL's memory*)."""
    command = _services(compose)["postgres"]["command"]
    settings = dict(arg.split("=", 1) for arg in command[2::2])
    assert command[0] == "postgres"
    assert set(command[1::2]) == {"-c"}
    assert settings["shared_buffers"] == "1GB"
    assert _services(compose)["postgres"]["shm_size"] == "256mb"


def test_forwarded_headers_are_trusted_from_the_proxy_network_only(
    compose: dict[str, Any],
) -> None:
    services = _services(compose)
    subnet = ipaddress.ip_network(compose["networks"]["internal"]["ipam"]["config"][0]["subnet"])
    mcp = services["mcp"]["command"]
    assert "--proxy-headers" in mcp
    allowed = mcp[mcp.index("--forwarded-allow-ips") + 1]
    assert allowed != "*"
    assert ipaddress.ip_network(allowed) == subnet
    web = services["web"]["command"]
    assert ipaddress.ip_network(web[web.index("--forwarded-allow-ips") + 1]) == subnet
    for name in APP_SERVICES:
        env = services[name]["environment"]
        assert ipaddress.ip_network(env["XMEMO_TRUSTED_PROXIES"]) == subnet, name
        assert services[name]["networks"] == ["internal"], name


def test_nginx_passes_the_outer_proxys_scheme_through() -> None:
    conf = (DOCKER / "nginx.conf").read_text(encoding="utf-8")
    assert not re.search(r"X-Forwarded-Proto\s+\$scheme\s*;", conf)
    mapped = re.search(r"map\s+\$http_x_forwarded_proto\s+\$(\w+)\s*{([^}]*)}", conf)
    assert mapped is not None
    assert re.search(r'""\s+\$scheme\s*;', mapped.group(2))  # only when nobody said
    assert re.search(rf"proxy_set_header\s+X-Forwarded-Proto\s+\${mapped.group(1)}\s*;", conf)
    # The request id reaches the app (and its log lines) from the edge on.
    assert re.search(r"proxy_set_header\s+X-Request-ID\s+\$\w+\s*;", conf)


def test_secrets_come_from_files_or_the_environment(compose: dict[str, Any]) -> None:
    secrets = compose["secrets"]
    for name in APP_SERVICES:
        service = _services(compose)[name]
        env = service["environment"]
        assert "SECRET_KEY" not in env, name  # not in `docker inspect`
        assert env["SECRET_KEY_FILE"] == "/run/secrets/secret_key", name
        assert "secret_key" in service["secrets"], name
    assert secrets["secret_key"]["environment"] == "SECRET_KEY"


def test_settings_read_a_secret_from_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from xmemo.settings import env_secret

    secret = tmp_path / "secret"
    secret.write_text("from-a-file\n", encoding="utf-8")
    monkeypatch.setenv("XMEMO_TEST_SECRET_FILE", str(secret))
    monkeypatch.setenv("XMEMO_TEST_SECRET", "from-the-environment")
    assert env_secret("XMEMO_TEST_SECRET") == "from-a-file"
    monkeypatch.delenv("XMEMO_TEST_SECRET_FILE")
    assert env_secret("XMEMO_TEST_SECRET") == "from-the-environment"
    monkeypatch.delenv("XMEMO_TEST_SECRET")
    assert env_secret("XMEMO_TEST_SECRET") == ""


def test_the_image_serves_static_files_and_counts_metrics_per_worker() -> None:
    dockerfile = (DOCKER / "Dockerfile").read_text(encoding="utf-8")
    assert "collectstatic" in dockerfile
    # gunicorn reads gunicorn.conf.py from its working directory (metrics across workers).
    assert re.search(r"^COPY .*\bgunicorn\.conf\.py\b.* \./$", dockerfile, re.MULTILINE)
    assert re.search(r"^WORKDIR /app$", dockerfile, re.MULTILINE)
    from django.conf import settings

    assert "whitenoise.middleware.WhiteNoiseMiddleware" in settings.MIDDLEWARE
