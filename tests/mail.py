"""E-mail in tests: the locmem outbox, and links read back out of it."""

from __future__ import annotations

import re

import pytest
from django.core import mail

INVITE_LINK = re.compile(r"https?://[^/\s]+(/invite/([^/\s]+)/)")


@pytest.fixture
def mail_on_commit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests run inside a transaction that never commits; mail queued for after the commit
    (``transaction.on_commit``) is sent at once instead."""
    monkeypatch.setattr("django.db.transaction.on_commit", lambda send, *a, **k: send())


def last_invite_path() -> str:
    """The path of the invitation link in the newest e-mail."""
    body = str(mail.outbox[-1].body)
    found = INVITE_LINK.search(body)
    assert found is not None, body
    return found.group(1)


def last_invite_token() -> str:
    return last_invite_path().split("/")[2]
