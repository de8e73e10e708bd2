"""The editor's live preview renders with the same capped renderer as Level 1 (docs/contract.md
§11)."""

from __future__ import annotations

from django.test import Client
from django.urls import reverse

from skills_app.domain.limits import MAX_BODY_BYTES
from tests.factories import Env


def test_an_amplifying_preview_shows_the_limit_instead_of_the_answer(
    owner_client: Client, env: Env
) -> None:
    response = owner_client.post(
        reverse("console:preview", args=(env.personal.slug,)),
        {
            "instruction_body": "$ARGUMENTS" * (MAX_BODY_BYTES // 10),
            "arguments": "x" * 10_000,
            "frontmatter": "",
        },
    )
    # A fragment htmx swaps in (2xx), saying what went wrong, not 65 MB of x.
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-testid="preview-error"' in html
    assert "262,144 bytes" in html
    assert len(response.content) < 4096


def test_the_preview_shows_a_warning_for_an_unknown_context_variable(
    owner_client: Client, env: Env
) -> None:
    response = owner_client.post(
        reverse("console:preview", args=(env.personal.slug,)),
        {
            "instruction_body": "Ticket ${XMEMO_TICKET} in ${XMEMO_WORKSPACE}: $1",
            "arguments": "now",
            "frontmatter": "",
        },
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-testid="preview-warning"' in html
    assert "${XMEMO_TICKET}" in html
    assert f"Ticket  in {env.personal.slug}: now" in html
