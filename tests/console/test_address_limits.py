"""Sign-in, sign-up and password reset are rate-limited per client address (docs/contract.md
§16b), whichever account they name: 429 in the console's look, with ``Retry-After``."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client

from tests.factories import Env

pytestmark = pytest.mark.django_db


def _assert_page_429(response: Any) -> None:
    assert response.status_code == 429, response.status_code
    assert 1 <= int(response["Retry-After"]) <= 60
    assert b"Too many requests" in response.content


def test_sign_in_attempts_over_many_accounts_hit_the_address_limit(env: Env, settings: Any) -> None:
    """django-axes locks one account per address; this bounds one address over all accounts."""
    settings.XMEMO_RATE_LIMIT_SIGNIN = "3/min"
    client = Client()
    for n in range(3):
        assert client.post("/login/", {"username": f"user{n}", "password": "x"}).status_code == 200
    _assert_page_429(client.post("/login/", {"username": env.owner.username, "password": "x"}))
    # Showing the page costs nothing and is not counted.
    assert client.get("/login/").status_code == 200
    assert Client(REMOTE_ADDR="203.0.113.5").post("/login/", {"username": "a"}).status_code == 200


def test_sign_up_answers_429_past_its_limit(settings: Any) -> None:
    settings.XMEMO_OPEN_SIGNUP = True
    settings.XMEMO_RATE_LIMIT_SIGNUP = "2/min"
    client = Client()
    password = "correct horse battery staple 42"
    for n in range(2):
        data = {"username": f"new{n}", "email": f"n{n}@x.org", "password": password}
        data["password2"] = password
        assert Client().post("/signup/", data).status_code == 302
    data = {"username": "new9", "email": "n9@x.org", "password": password, "password2": password}
    _assert_page_429(client.post("/signup/", data))
    assert not get_user_model().objects.filter(username="new9").exists()


def test_password_reset_answers_429_past_its_limit(env: Env, settings: Any) -> None:
    settings.XMEMO_RATE_LIMIT_PASSWORD_RESET = "2/min"
    env.owner.email = "owner@example.com"
    env.owner.set_password("correct horse battery staple 42")
    env.owner.save()
    client = Client()
    for _ in range(2):
        assert client.post("/password-reset/", {"email": "owner@example.com"}).status_code == 302
    _assert_page_429(client.post("/password-reset/", {"email": "owner@example.com"}))
    assert len(mail.outbox) == 2
