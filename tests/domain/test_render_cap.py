"""The renderer's output cap (docs/contract.md §5, §11): 256 KiB, and it stops before building more.

The attack: a 64 KiB body of ``$ARGUMENTS`` with 10,000 characters of arguments would render
to ~65 MB. The renderer must refuse it without ever holding anything near that in memory.
"""

from __future__ import annotations

import tracemalloc

import pytest

from skills_app.domain.limits import MAX_BODY_BYTES
from skills_app.domain.render import MAX_RENDERED_BYTES, render_body
from skills_app.errors import RenderedTooLarge

ARGUMENTS = "x" * 10_000
BOMB = "$ARGUMENTS" * (MAX_BODY_BYTES // len("$ARGUMENTS"))


def test_the_cap_is_256_kib() -> None:
    assert MAX_RENDERED_BYTES == 256 * 1024


def test_an_amplifying_body_is_refused_with_bounded_memory() -> None:
    tracemalloc.start()
    try:
        with pytest.raises(RenderedTooLarge) as raised:
            render_body(BOMB, arguments=ARGUMENTS)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert raised.value.status == 413
    assert raised.value.code == "RENDERED_TOO_LARGE"
    assert raised.value.details["limit"] == MAX_RENDERED_BYTES
    # What a full render would hold is ~65 MB; stopping at the cap keeps it to a few times it.
    assert peak < 4 * MAX_RENDERED_BYTES, peak


@pytest.mark.parametrize(
    "body",
    [
        "$1 " * 30_000,  # positional arguments amplify too
        "${XMEMO_WORKSPACE}" * 3_000,
        "@" + "p" * 60_000 + " " + "$0" * 2_000,
    ],
)
def test_every_token_counts_toward_the_cap(body: str) -> None:
    with pytest.raises(RenderedTooLarge):
        render_body(body, arguments="y" * 200, context={"XMEMO_WORKSPACE": "w" * 200})


def test_the_cap_counts_utf8_bytes_and_allows_exactly_the_limit() -> None:
    # 4-byte characters: the limit in characters would let 4x through.
    argument = "\U0001f600" * 1024  # 4 KiB of UTF-8
    fits = "$ARGUMENTS" * (MAX_RENDERED_BYTES // 4096)
    assert len(render_body(fits, arguments=argument).encode("utf-8")) == MAX_RENDERED_BYTES
    with pytest.raises(RenderedTooLarge):
        render_body(fits + "!", arguments=argument)
