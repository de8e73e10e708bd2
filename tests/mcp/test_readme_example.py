"""The plain SDK client of docs/connect.md, run as written against `make run`'s demo data (issue
25 #21: it recalled a slug the demo data lacks and died on ``KeyError``)."""

from __future__ import annotations

import contextlib
import io
import re

import pytest
from django.core.management import call_command

from skills_app.management import demo_data
from skills_app.mcp_profiles import exposed_tools
from tests.e2e.processes import ROOT

pytestmark = pytest.mark.django_db(transaction=True)


DOC = "docs/connect.md"


def _documented_client() -> str:
    page = (ROOT / DOC).read_text(encoding="utf-8")
    section = page[page.index("### A plain SDK client") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


def test_the_documented_sdk_client_runs_against_the_demo_data(live_url: str) -> None:
    seeded = io.StringIO()
    call_command("seed_demo", "--print-credentials", stdout=seeded)
    token = seeded.getvalue().split("Demo token: ")[1].split()[0]
    code = _documented_client()
    assert "Bearer xm_…" in code
    assert "http://127.0.0.1:8000/mcp" in code
    code = code.replace("xm_…", token).replace("http://127.0.0.1:8000", live_url)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, DOC, "exec"), {"__name__": "documented"})
    out = printed.getvalue()
    assert repr(exposed_tools("ordinary-full")) in out  # the demo token's profile
    components = [c for c in demo_data.INCIDENT.components or () if c.content]
    assert components
    for component in components:  # every resource of the recalled skill was printed
        assert component.content.decode()[:80] in out, out
