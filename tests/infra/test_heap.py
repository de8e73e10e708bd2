"""Both server entries freeze their start-up heap (skills_app/infra/heap.py): a full collection no
longer scans the objects every process holds for its whole life, nor the embedding model a
process loads at its first search."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.e2e.processes import ROOT

PROBE = """
import gc, sys
import {module}
from django.urls import get_resolver
frozen = gc.get_freeze_count()
views = [m for m in sys.modules if m.startswith("skills_app.api")]
runtime = all(m in sys.modules for m in ("faiss", "onnxruntime", "tokenizers"))
print(frozen, len(views), int(runtime))
"""


def _probe(script: str, module: str, **settings: str) -> str:
    """What ``script`` prints, run in a fresh process that imports the server entry ``module``
    with the product's own settings (and ``settings``, as environment variables)."""
    env = {**os.environ, **settings}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "-c", script.format(module=module)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize("module", ["xmemo.wsgi", "xmemo.asgi"])
def test_the_server_entry_freezes_what_it_imported(module: str) -> None:
    frozen, views, runtime = (int(n) for n in _probe(PROBE, module).split())
    assert frozen > 100_000  # Django, DRF, the MCP SDK and the project: hundreds of thousands
    assert views > 0  # the URL configuration's views were imported before the freeze
    assert runtime == 1  # and semantic search's libraries


def test_a_loaded_encoder_is_settled_out_of_the_collectors_way() -> None:
    import gc

    from skills_app.encoder import embedding

    embedding.reset_for_tests()
    try:
        before = gc.get_freeze_count()
        assert embedding.query_encoder() is not None
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()
        embedding.reset_for_tests()
