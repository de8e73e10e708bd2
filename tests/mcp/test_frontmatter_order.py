"""Frontmatter keys keep the order their author wrote them in (docs/contract.md §3), on PostgreSQL:
saved over MCP, recalled over REST and MCP, exported as a capsule and imported again. (SQLite: see
tests/services/test_sqlite_frontmatter_order.py.)"""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest
from django.db import connection

from tests.factories import make_team, make_token, make_user, personal_ws
from tests.mcp.conftest import rest, with_mcp
from tests.support import require_service

pytestmark = pytest.mark.django_db(transaction=True)

FRONTMATTER = {
    "zeta-long-key": "last in the alphabet, first as written",
    "alpha": 1,
    "license": "MIT",
    "allowed-tools": ["Read", "Bash(git:*)"],
    "metadata": {"zz-nested": True, "aa-nested": {"y": 1, "b": 2}},
}


def _order(value: Any) -> Any:
    """Key order, nested mappings included, as a comparable value."""
    if isinstance(value, dict):
        return [(key, _order(item)) for key, item in value.items()]
    return value


def _poll_done(url: str, secret: str, job_id: str) -> dict[str, Any]:
    job = rest(url, secret, "GET", f"/v1/jobs/{job_id}").json()
    assert job["state"] == "succeeded", job
    return dict(job)


def test_key_order_survives_save_recall_export_and_import(live_url: str) -> None:
    require_service("postgresql", connection.vendor == "postgresql")
    user = make_user()
    ws = personal_ws(user).slug
    other = make_team(user, slug=f"{user.username}-copy").slug
    secret = make_token(user, ["skills:read", "skills:write"])[1]
    payload = {
        "workspace": ws,
        "slug": "ordered",
        "name": "Ordered",
        "description": "Keys as written.",
        "instruction_body": "Body.\n",
        "frontmatter": FRONTMATTER,
        "intent": "publish",
    }
    saved = with_mcp(live_url, secret, lambda c: c.call_tool("save_cloud_skill", payload))
    assert not saved.is_error, saved.structured_content
    expected = _order(FRONTMATTER)

    by_rest = json.loads(rest(live_url, secret, "GET", f"/v1/recall?slug={ws}/ordered").text)
    assert _order(by_rest["data"]["frontmatter"]) == expected
    by_mcp = with_mcp(
        live_url, secret, lambda c: c.call_tool("recall_cloud_skill", {"slug": f"{ws}/ordered"})
    )
    assert _order(by_mcp.structured_content["data"]["frontmatter"]) == expected

    revision_id = by_rest["data"]["revision_id"]
    started = rest(live_url, secret, "POST", "/v1/exports", json={"revision_id": revision_id})
    job = _poll_done(live_url, secret, started.json()["job_id"])
    capsule = rest(live_url, secret, "GET", job["result"]["download_url"]).content
    skill_md = zipfile.ZipFile(io.BytesIO(capsule)).read("SKILL.md").decode()
    header = skill_md.split("---\n")[1]
    keys = [line.split(":", 1)[0] for line in header.splitlines() if line[:1].isalpha()]
    # The capsule's SKILL.md is named by the slug; the display name goes last into metadata.
    assert keys == ["name", "description", *FRONTMATTER]
    assert "\n  aa-nested:\n    y: 1\n    b: 2\n  xmemo-display-name: " in header
    assert header.startswith("name: ordered\n")

    imported = rest(
        live_url,
        secret,
        "POST",
        "/v1/imports",
        data={"workspace": other},
        files={"file": ("ordered.zip", capsule, "application/zip")},
    )
    result = _poll_done(live_url, secret, imported.json()["job_id"])["result"]
    again = rest(live_url, secret, "GET", f"/v1/revisions/{result['revision_id']}").json()
    assert _order(again["frontmatter"]) == expected
    assert result["canonical_hash"] == by_rest["data"]["canonical_hash"]
