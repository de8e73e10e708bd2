"""Webhooks (docs/contract.md §16): subscriptions of a workspace, and the signed delivery of events.

A delivery is a POST of the event JSON with the Standard Webhooks headers (``webhook-id``,
``webhook-timestamp``, ``webhook-signature``), sent through the outbound guard to the
address it pinned. Redirects are not followed (a 3xx counts as a failure), the wait is
bounded by ``XMEMO_WEBHOOK_TIMEOUT_SECONDS`` and at most ``RESPONSE_READ_BYTES`` of the answer
are read. Failed attempts are retried with exponential backoff up to
``XMEMO_WEBHOOK_MAX_ATTEMPTS``; every attempt is logged.
"""

from __future__ import annotations

import base64
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime

import httpx
from cryptography.fernet import InvalidToken
from django.conf import settings
from django.db import transaction
from standardwebhooks import Webhook as Signer

from skills_app import errors
from skills_app.access import ADMIN_ROLES, Actor, require_role, require_scope
from skills_app.domain.json_bytes import encode_json
from skills_app.infra import outbound
from skills_app.infra.crypto import secret_encrypt, secret_open
from skills_app.models import Webhook, WebhookAttempt, WebhookDelivery, Workspace
from skills_app.services.audit import audit_record
from skills_app.services.events import EVENT_TYPES, delivery_enqueue_after_commit

RESPONSE_READ_BYTES = 64 * 1024
RESPONSE_EXCERPT_CHARS = 1000
USER_AGENT = "xmemo-webhooks"


def _refused(url: str, reason: str) -> errors.XmemoError:
    return errors.ValidationFailed(
        f"The webhook URL {url} was refused: {reason}.",
        details={"field": "url", "reason": reason},
    )


def _guard(url: str) -> outbound.Target:
    return outbound.pin(url, allow_private=settings.XMEMO_WEBHOOK_ALLOW_PRIVATE, refuse=_refused)


def _admin(actor: Actor, workspace: Workspace) -> None:
    require_scope(actor, "workspace:admin")
    require_role(actor, workspace, ADMIN_ROLES)


@transaction.atomic
def webhook_create(
    *, actor: Actor, workspace: Workspace, url: str, events: list[str]
) -> tuple[Webhook, str]:
    """Subscribe ``url`` to ``events``; returns the webhook and its signing secret."""
    _admin(actor, workspace)
    url = url.strip()
    if len(url) > 2000:
        raise errors.ValidationFailed(
            "A URL has at most 2000 characters.", details={"field": "url"}
        )
    unknown = [e for e in events if e not in EVENT_TYPES]
    if unknown or not events:
        raise errors.ValidationFailed(
            f"events must be a non-empty subset of {', '.join(EVENT_TYPES)}.",
            details={"field": "events", "invalid": unknown},
        )
    _guard(url)
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode("ascii")
    webhook = Webhook.objects.create(
        workspace=workspace,
        url=url,
        events=[e for e in EVENT_TYPES if e in events],
        secret_ciphertext=secret_encrypt(secret),
        created_by=actor.user,
    )
    audit_record(
        actor=actor,
        workspace=workspace,
        action="workspace.webhook.create",
        target_type="webhook",
        target_id=webhook.webhook_id,
        data={"url": url, "events": webhook.events},
    )
    return webhook, secret


@transaction.atomic
def webhook_delete(*, actor: Actor, webhook: Webhook) -> None:
    _admin(actor, webhook.workspace)
    audit_record(
        actor=actor,
        workspace=webhook.workspace,
        action="workspace.webhook.delete",
        target_type="webhook",
        target_id=webhook.webhook_id,
        data={"url": webhook.url},
    )
    webhook.delete()


@transaction.atomic
def delivery_redeliver(*, actor: Actor, delivery: WebhookDelivery) -> WebhookDelivery:
    """Send a delivery again (same event id), with a fresh round of attempts."""
    _admin(actor, delivery.webhook.workspace)
    # Only a finished delivery goes out again: two rounds at once would POST twice. Unclaimed,
    # it is sent once, by the send after commit or by the outbox sweep, whichever claims it.
    updated = (
        WebhookDelivery.objects.filter(pk=delivery.pk)
        .exclude(state=WebhookDelivery.State.PENDING)
        .update(state=WebhookDelivery.State.PENDING, enqueued_at=None)
    )
    if not updated:
        raise errors.Conflict(
            "This delivery is still being attempted; redeliver it once it has finished.",
            details={"id": delivery.delivery_id},
        )
    delivery.refresh_from_db()
    audit_record(
        actor=actor,
        workspace=delivery.webhook.workspace,
        action="workspace.webhook.redeliver",
        target_type="delivery",
        target_id=delivery.delivery_id,
        data={"webhook_id": delivery.webhook.webhook_id, "event_id": delivery.event_id},
    )
    delivery_enqueue_after_commit(delivery.delivery_id)
    return delivery


@dataclass(frozen=True)
class _Outcome:
    status_code: int | None
    excerpt: str
    error: str

    @property
    def ok(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def _post(webhook: Webhook, delivery: WebhookDelivery) -> _Outcome:
    body = encode_json(delivery.payload).decode("utf-8")
    now = datetime.now(tz=UTC)
    try:
        secret = secret_open(webhook.secret_ciphertext)
    except InvalidToken:
        return _Outcome(
            None,
            "",
            "The signing secret cannot be decrypted with the configured keys "
            "(XMEMO_SECRETS_KEY); delete the webhook and create it again.",
        )
    signature = Signer(secret).sign(delivery.event_id, now, body)
    try:
        target = _guard(webhook.url)
    except errors.XmemoError as exc:
        return _Outcome(None, "", exc.message[:500])
    headers = {
        "Host": target.host_header,
        "User-Agent": USER_AGENT,
        "Content-Type": "application/json",
        "webhook-id": delivery.event_id,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": signature,
    }
    timeout = settings.XMEMO_WEBHOOK_TIMEOUT_SECONDS
    try:
        with httpx.Client(follow_redirects=False, trust_env=False, timeout=timeout) as client:
            request = client.build_request(
                "POST",
                target.url,
                content=body.encode("utf-8"),
                headers=headers,
                extensions={"sni_hostname": target.hostname},
            )
            response = client.send(request, stream=True)
            try:
                read = bytearray()
                for chunk in response.iter_raw():
                    read += chunk
                    if len(read) >= RESPONSE_READ_BYTES:
                        break
            finally:
                response.close()
            excerpt = bytes(read).decode("utf-8", "replace")[:RESPONSE_EXCERPT_CHARS]
            return _Outcome(response.status_code, excerpt, "")
    except httpx.TimeoutException:
        return _Outcome(None, "", f"no answer within {timeout:g} seconds")
    except httpx.HTTPError as exc:
        return _Outcome(None, "", f"{type(exc).__name__}: {exc}"[:500])


def backoff_seconds(attempt: int) -> float:
    """The wait after failed attempt number ``attempt`` (1-based): base * 2**(attempt-1)."""
    return float(settings.XMEMO_WEBHOOK_BACKOFF_SECONDS * 2 ** (attempt - 1))


def delivery_attempt(*, delivery_id: str, round_start: int = 0) -> float | None:
    """Try one POST of a pending delivery and log it. Returns the seconds to wait before the
    next attempt, or None when there is none (delivered, given up, or nothing to do).
    ``round_start`` is the number of attempts logged before this round (a redelivery starts a
    fresh round of XMEMO_WEBHOOK_MAX_ATTEMPTS)."""
    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.select_for_update()
            .select_related("webhook")
            .filter(delivery_id=delivery_id, state=WebhookDelivery.State.PENDING)
            .first()
        )
        if delivery is None:
            return None
        delivery.attempts += 1
        number = delivery.attempts
        delivery.save(update_fields=["attempts"])
    started = time.monotonic()
    outcome = _post(delivery.webhook, delivery)
    latency = int((time.monotonic() - started) * 1000)
    give_up = number - round_start >= settings.XMEMO_WEBHOOK_MAX_ATTEMPTS
    with transaction.atomic():
        WebhookAttempt.objects.create(
            delivery=delivery,
            number=number,
            status_code=outcome.status_code,
            latency_ms=latency,
            response_excerpt=outcome.excerpt,
            error=outcome.error,
        )
        if outcome.ok or give_up:
            state = WebhookDelivery.State.SUCCEEDED if outcome.ok else WebhookDelivery.State.FAILED
            WebhookDelivery.objects.filter(pk=delivery.pk).update(state=state)
            return None
    return backoff_seconds(number)
