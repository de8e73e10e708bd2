"""Opaque public ids (``skill_…``, ``rev_…``): internal primary keys never leave the server."""

import secrets


def new_public_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(10)}"


def skill_id() -> str:
    return new_public_id("skill")


def revision_id() -> str:
    return new_public_id("rev")


def job_id() -> str:
    return new_public_id("job")


def token_id() -> str:
    return new_public_id("tok")


def invitation_id() -> str:
    return new_public_id("inv")


def webhook_id() -> str:
    return new_public_id("wh")


def delivery_id() -> str:
    return new_public_id("whd")


def event_id() -> str:
    return new_public_id("evt")
