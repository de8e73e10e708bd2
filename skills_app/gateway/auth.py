"""Bearer-token authentication for every door: REST (DRF and the lean recall view), MCP over
HTTP and stdio.

Tokens carry 256 random bits, so a stored SHA-256 needs no slow hash: one indexed query on
``secret_hash``. A verified token is then cached in process for ``XMEMO_AUTH_CACHE_SECONDS``;
a change to the token, user or membership drops it at once here (signals) and, on PostgreSQL,
in every other process at its next request (``infra/invalidation.py``); elsewhere a revoked
token lives at most that long (docs/operations.md). Memberships are never cached. OAuth access
tokens take the same path, accepted only where the caller passes the request's ``origin`` (the
audience check). ``last_used_at`` is written at most once a minute per token and process."""

from __future__ import annotations

import ipaddress
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models.signals import post_delete, post_save
from django.http import HttpRequest
from django.utils import timezone
from oauth2_provider.models import AccessToken

from skills_app import errors
from skills_app.access import Actor
from skills_app.domain.tokens import MAX_TOKEN_LENGTH, TOKEN_PREFIX, token_hash
from skills_app.infra import invalidation, requestctx
from skills_app.models import ApiToken, Membership
from skills_app.oauth import tokens as oauth_tokens
from skills_app.oauth.resource import audience_allows

if TYPE_CHECKING:
    from django.contrib.auth.models import User

LAST_USED_INTERVAL = timedelta(minutes=1)
_MAX_ENTRIES = 10_000


@dataclass(frozen=True)
class _Entry:
    token: ApiToken
    user: User
    loaded_at: float
    generation: int | None
    expires_at: datetime | None = None  # OAuth access tokens: their own expiry
    audience: tuple[str, ...] | None = None  # OAuth access tokens: the resources issued for
    workspace: str | None = None  # the slug of the token's workspace, for the request log


def _workspace_slug(token: ApiToken) -> str | None:
    return token.workspace.slug if token.workspace else None


_cache: dict[str, _Entry] = {}
_last_used_written: dict[int, float] = {}
_lock = threading.Lock()


def cache_seconds() -> float:
    return float(getattr(settings, "XMEMO_AUTH_CACHE_SECONDS", 5.0))


def clear_token_cache() -> None:
    with _lock:
        _cache.clear()
        _last_used_written.clear()


def _drop_token(token_pk: int | None = None, user_pk: int | None = None) -> None:
    with _lock:
        for key, entry in list(_cache.items()):
            if entry.token.pk == token_pk or entry.user.pk == user_pk:
                _cache.pop(key, None)


def _on_token_change(sender: Any, instance: ApiToken, **kwargs: Any) -> None:
    _drop_token(token_pk=instance.pk)


def _on_user_change(sender: Any, instance: Any, **kwargs: Any) -> None:
    _drop_token(user_pk=instance.pk)


def _on_membership_change(sender: Any, instance: Membership, **kwargs: Any) -> None:
    _drop_token(user_pk=instance.user_id)


def _on_access_token_delete(sender: Any, instance: AccessToken, **kwargs: Any) -> None:
    # An OAuth access token is cached under its own checksum (the library's lookup key).
    with _lock:
        _cache.pop(instance.token_checksum, None)


post_delete.connect(
    _on_access_token_delete, sender=AccessToken, dispatch_uid="xmemo-auth-oauth-delete"
)
post_save.connect(_on_token_change, sender=ApiToken, dispatch_uid="xmemo-auth-token-save")
post_delete.connect(_on_token_change, sender=ApiToken, dispatch_uid="xmemo-auth-token-delete")
post_save.connect(_on_user_change, sender=get_user_model(), dispatch_uid="xmemo-auth-user-save")
post_delete.connect(_on_user_change, sender=get_user_model(), dispatch_uid="xmemo-auth-user-del")
post_save.connect(_on_membership_change, sender=Membership, dispatch_uid="xmemo-auth-member-save")
post_delete.connect(_on_membership_change, sender=Membership, dispatch_uid="xmemo-auth-member-del")


def _load(secret_hash: str) -> _Entry | None:
    token = (
        ApiToken.objects.select_related("user", "workspace").filter(secret_hash=secret_hash).first()
    )
    if token is None:
        return None
    return _Entry(
        token=token,
        user=token.user,
        loaded_at=time.monotonic(),
        generation=invalidation.current(),
        workspace=_workspace_slug(token),
    )


def _load_oauth(digest: str) -> _Entry | None:
    access = oauth_tokens.access_for(digest)
    if access is None:
        return None
    return _Entry(
        token=access.token,
        user=access.token.user,
        loaded_at=time.monotonic(),
        generation=invalidation.current(),
        expires_at=access.expires,
        audience=access.resources,
        workspace=_workspace_slug(access.token),
    )


def authenticate_secret(
    secret: str, *, origin: Callable[[], str] | None = None
) -> tuple[User, ApiToken]:
    """The user and token of a bearer secret, or AuthenticationRequired (401).

    With ``origin`` (working out the request's scheme://host), an OAuth access token issued for
    this server is accepted too, and answers the ``ApiToken`` of its consent. It is called only
    for such a token, whose audience needs it: an API token has none, and the host check is not
    free on the hot path.
    """
    oauth = not secret.startswith(TOKEN_PREFIX)
    if (oauth and origin is None) or len(secret) > MAX_TOKEN_LENGTH:
        raise errors.AuthenticationRequired(
            "The bearer token is not an XMemo token (they start with 'xm_')."
        )
    digest = token_hash(secret)
    ttl = cache_seconds()
    now = time.monotonic()
    entry = _cache.get(digest)
    generation = invalidation.current() if entry is not None else None
    if (
        entry is None
        or ttl <= 0
        or now - entry.loaded_at > ttl
        or (generation is not None and entry.generation != generation)
    ):
        entry = _load_oauth(digest) if oauth else _load(digest)
        if entry is None:
            raise errors.AuthenticationRequired("The bearer token is not valid.")
        if ttl > 0:
            with _lock:
                if len(_cache) >= _MAX_ENTRIES:
                    _cache.clear()
                _cache[digest] = entry
    wall = timezone.now()
    _admit(entry, origin, wall)
    _touch(entry.token, now, wall)
    requestctx.note(token_id=entry.token.token_id, workspace=entry.workspace)
    return entry.user, entry.token


def _admit(entry: _Entry, origin: Callable[[], str] | None, wall: datetime) -> None:
    """Raise AuthenticationRequired unless the verified token may be used now."""
    token, user = entry.token, entry.user
    if token.revoked_at is not None:
        raise errors.AuthenticationRequired("This token was revoked; create a new one.")
    if token.expires_at is not None and token.expires_at <= wall:
        raise errors.AuthenticationRequired("This token has expired; create a new one.")
    # A workspace's token outlives its creator's account being switched off.
    if not user.is_active and not token.owned_by_workspace:
        raise errors.AuthenticationRequired("The user of this token is deactivated.")
    if entry.expires_at is not None and entry.expires_at <= wall:
        raise errors.AuthenticationRequired("This access token has expired; refresh it.")
    if entry.audience is not None and not audience_allows(
        entry.audience, origin() if origin is not None else ""
    ):
        raise errors.AuthenticationRequired("This access token was issued for another server.")


def verification(secret: str) -> object | None:
    """The cached verification of ``secret`` that ``authenticate_secret`` has just used, as an
    opaque stamp for ``verified_again``; None when none is cached."""
    return _cache.get(token_hash(secret))


def verified_again(
    secret: str, stamp: object, *, via: str, origin: Callable[[], str] | None, ip: str | None
) -> Actor | None:
    """``actor_for_secret`` with no I/O (an event loop may call it), or None for the door to
    authenticate as usual: ``stamp`` must still be the cached verification, within its lifetime,
    the token admitted now, and no ``last_used_at`` write due."""
    entry = _cache.get(token_hash(secret))
    if entry is None or entry is not stamp or time.monotonic() - entry.loaded_at > cache_seconds():
        return None
    try:
        _admit(entry, origin, timezone.now())
    except errors.AuthenticationRequired:
        return None
    if _touch_due(entry.token, time.monotonic()):
        return None
    requestctx.note(token_id=entry.token.token_id, workspace=entry.workspace)
    return Actor(user=entry.user, token=entry.token, via=via, ip=ip)


def _touch_due(token: ApiToken, now: float) -> bool:
    last = _last_used_written.get(token.pk)
    return last is None or now - last >= LAST_USED_INTERVAL.total_seconds()


def _touch(token: ApiToken, now: float, wall: Any) -> None:
    if not _touch_due(token, now):
        return
    _last_used_written[token.pk] = now
    if token.last_used_at is None or wall - token.last_used_at >= LAST_USED_INTERVAL:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=wall)
        token.last_used_at = wall


def _trusted(address: str, proxies: list[str]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
        return any(ip in ipaddress.ip_network(proxy, strict=False) for proxy in proxies)
    except ValueError:
        return False


def client_ip(request: HttpRequest) -> str | None:
    """The address of the client: ``REMOTE_ADDR``, unless that is one of
    ``XMEMO_TRUSTED_PROXIES`` (addresses or networks; none by default, so no header is believed).
    Then ``X-Forwarded-For`` is read from the right, each trusted proxy appending the address it
    was reached from, and the first hop that is not a trusted proxy is the client — whatever a
    client wrote further left is its own claim and never believed."""
    remote: str | None = request.META.get("REMOTE_ADDR") or None
    proxies = settings.XMEMO_TRUSTED_PROXIES
    if remote is None or not proxies or not _trusted(remote, proxies):
        return remote
    for hop in reversed(request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")):
        hop = hop.strip()
        try:
            ipaddress.ip_address(hop)
        except ValueError:
            break  # malformed: stop believing the chain here
        if not _trusted(hop, proxies):
            return hop
        remote = hop
    return remote


def actor_for_secret(
    secret: str, *, via: str, origin: Callable[[], str] | None, ip: str | None
) -> Actor:
    """The ``Actor`` of a bearer secret arriving through the door ``via``, or
    AuthenticationRequired (401). ``origin`` as for ``authenticate_secret``."""
    user, token = authenticate_secret(secret, origin=origin)
    return Actor(user=user, token=token, via=via, ip=ip)
