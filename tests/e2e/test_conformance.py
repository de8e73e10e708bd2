"""The official MCP conformance suite (``@modelcontextprotocol/conformance``, pinned in
``tests/e2e/conformance/package-lock.json``) against the production topology (gunicorn, the MCP
service, a Celery worker, PostgreSQL, Redis), on both protocol revisions, for every scenario
docs/contract.md §20 names.

The suite connects without credentials, so a loopback proxy in front adds a real token
(``token_proxy``), as nginx fronts the services in production. Known failures, each with its
reason, are in ``conformance/expected-failures.yml``; any other, or a stale entry, fails."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.e2e.processes import (
    celery_worker,
    execute_queue,
    free_port,
    gunicorn,
    mcp_service,
    process_env,
    require_production_services,
    running,
    unique_queue,
)
from tests.e2e.token_proxy import token_proxy
from tests.factories import component, make_token, make_user, personal_ws, publish
from tests.mcp.test_http import PNG
from tests.support import node_22, npm_locked

SUITE = Path(__file__).resolve().parent / "conformance"
REVISIONS = ("2025-11-25", "2026-07-28")
# docs/contract.md §20. A scenario the suite ties to one revision is skipped by it on the other.
SCENARIOS = (
    "sep-2640-skills-enumeration",
    "sep-2640-skills-manifest",
    "sep-2640-skills-directory",
    "server-initialize",
    "server-stateless",
    "caching",
    "http-header-validation",
    "sep-2164-resource-not-found",
    "tools-list",
    "resources-list",
    "prompts-list",
    "dns-rebinding-protection",
)
# Extensions are on no revision's timeline: the suite runs them at a revision when forced.
EXTENSIONS = {name for name in SCENARIOS if name.startswith("sep-2640-")}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _seed() -> str:
    """A user with skills worth testing, and their read-only token (default profile)."""
    user = make_user("conformance")
    ws = personal_ws(user)
    publish(
        user,
        ws,
        slug="deploy",
        frontmatter={
            "license": "Apache-2.0",
            "version": 1.0,
            "released": "2024-01-01",
            "enabled": "yes",
            "metadata": {"owner": "ops", "tags": ["deploy", "prod"], "nested": {"depth": 2}},
            "allowed-tools": ["Bash(git:*)", "Read"],
        },
        instruction_body="# Deploy\n\nPick a template from `templates/`.\n",
        components=(
            component("templates/invoice.md", "# Invoice\n", "template"),
            component("templates/regional/eu é.md", "# EU\n", "template"),
            component("assets/logo.png", PNG, "artifact"),
            component("scripts/check.py", "print('ok')\n", "script"),
        ),
    )
    publish(
        user,
        ws,
        slug="ship",
        frontmatter={"invoke": {"user": True}, "argument-names": ["target"]},
        instruction_body="Ship $target.\n",
    )
    return make_token(user, ["skills:read"])[1]


def _run(node: Path, suite: Path, url: str, scenario: str, revision: str) -> str:
    cli = suite / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    command = [str(node / "node"), str(cli), "server", "--url", url, "--scenario", scenario]
    command += [
        "--spec-version",
        revision,
        "--expected-failures",
        str(SUITE / "expected-failures.yml"),
    ]
    if scenario in EXTENSIONS:
        command.append("--force")
    env = {**os.environ, "PATH": f"{node}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, env=env, cwd=suite.parent
    )
    output = _ANSI.sub("", done.stdout + done.stderr)
    assert done.returncode == 0, f"{scenario} at {revision}:\n{output[-6000:]}"
    return output


@pytest.mark.django_db(transaction=True)
def test_the_official_conformance_suite_passes_on_both_revisions(tmp_path: Path) -> None:
    require_production_services()
    node, suite = node_22(), npm_locked(SUITE)
    secret = _seed()
    queue = unique_queue()
    env = process_env(XMEMO_TASK_QUEUE=queue)
    web_port, mcp_port = free_port(), free_port()
    web, mcp = f"http://127.0.0.1:{web_port}", f"http://127.0.0.1:{mcp_port}"
    with (
        running(celery_worker(queue, execute_queue(queue)), env=env, log=tmp_path / "worker.log"),
        running(gunicorn(web_port), env=env, ready_url=f"{web}/healthz", log=tmp_path / "web.log"),
        running(
            mcp_service(mcp_port), env=env, ready_url=f"{mcp}/healthz", log=tmp_path / "mcp.log"
        ),
        token_proxy(mcp=mcp, web=web, secret=secret) as proxy,
    ):
        results = {
            (scenario, revision): _run(node, suite, f"{proxy}/mcp", scenario, revision)
            for revision in REVISIONS
            for scenario in SCENARIOS
        }
    # Each extension scenario really ran, and found the seeded skills, at each revision.
    for revision in REVISIONS:
        for scenario in EXTENSIONS:
            assert re.search(r"Passed: (\d+)/\1, 0 failed", results[scenario, revision]), results[
                scenario, revision
            ]
    assert "Passed: " in results["sep-2164-resource-not-found", "2026-07-28"]
