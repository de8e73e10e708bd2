"""The token format: one hash, one bearer-header parser."""

from __future__ import annotations

import hashlib

import pytest

from skills_app.domain.tokens import bearer_secret, token_hash


@pytest.mark.parametrize(
    ("header", "secret"),
    [
        ("Bearer xm_abc", "xm_abc"),
        ("bearer xm_abc", "xm_abc"),
        ("BEARER   xm_abc  ", "xm_abc"),
        ("Bearer ", None),
        ("Bearer", None),
        ("", None),
        ("Basic dXNlcjpwdw==", None),
        ("Token xm_abc", None),
    ],
)
def test_bearer_secret_reads_one_header_rule(header: str, secret: str | None) -> None:
    assert bearer_secret(header) == secret


def test_token_hash_is_sha256_of_utf8_and_never_raises() -> None:
    assert token_hash("xm_abc") == hashlib.sha256(b"xm_abc").hexdigest()
    lone = token_hash("xm_\udc80")
    assert len(lone) == 64
    assert lone != token_hash("xm_")
