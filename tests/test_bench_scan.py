"""The scanner's bench as a guard (docs/scanning.md): every planted attack is caught with its
category, file and line, and no public skill of the corpus is blocked."""

from __future__ import annotations

import pytest

from bench.scan import corpus
from bench.scan_planted import PLANTED, Planted, caught
from skills_app.domain.scan import scan_bundle


@pytest.mark.parametrize("planted", PLANTED, ids=lambda p: p.slug)
def test_each_planted_attack_is_caught_where_it_is(planted: Planted) -> None:
    ok, seen = caught(planted)
    assert ok, (
        f"{planted.attack}: expected {planted.category}@{planted.path}:{planted.line}, {seen}"
    )


def test_no_public_skill_of_the_corpus_is_blocked() -> None:
    blocked = [
        slug
        for slug, bundle in corpus()
        if scan_bundle(slug=slug, bundle=bundle).verdict == "block"
    ]
    assert blocked == []
