"""Which redirect URIs a client may register: plaintext ``http`` only for a loopback callback.

``http`` stays in ``OAUTH2_PROVIDER["ALLOWED_REDIRECT_URI_SCHEMES"]`` because native clients
receive the code on ``http://127.0.0.1:PORT/…`` or ``http://[::1]:PORT/…`` (RFC 8252 §7.3), a
callback that never leaves the machine. Any other plaintext redirect would carry codes over
the network in the clear (RFC 9700 §2.1), and registration is open, so it is refused wherever an
Application is written (dynamic registration and its RFC 7592 update, the admin) and ignored at
the authorization endpoint (:class:`skills_app.oauth.validator.ConnectionValidator`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from urllib.parse import urlsplit

from django.http import HttpRequest, HttpResponse, JsonResponse
from oauth2_provider.settings import oauth2_settings

# Registration is open (docs/contract.md §16b): one client holds at most this many.
MAX_REDIRECT_URIS = 10


def plaintext_off_loopback(uris: Iterable[str]) -> list[str]:
    """The ``http`` URIs among ``uris`` whose host is not loopback, in the library's sense of
    loopback (``127.0.0.1``, ``::1``, and ``localhost`` only with ``ALLOW_LOCALHOST_LOOPBACK``)."""
    loopback = {"127.0.0.1", "::1"}
    if oauth2_settings.ALLOW_LOCALHOST_LOOPBACK:
        loopback.add("localhost")
    refused = []
    for uri in uris:
        try:
            parts = urlsplit(uri)
            host = parts.hostname
        except ValueError:
            continue  # malformed: the library's own URI validation answers it
        if parts.scheme.lower() == "http" and host not in loopback:
            refused.append(uri)
    return refused


def _requested_redirect_uris(request: HttpRequest) -> list[str]:
    """The string ``redirect_uris`` of an RFC 7591 metadata body; anything malformed is left to
    the library's parser, which answers it with ``invalid_client_metadata``."""
    try:
        metadata = json.loads(request.body)
    except ValueError:
        return []
    uris = metadata.get("redirect_uris") if isinstance(metadata, dict) else None
    return [uri for uri in uris if isinstance(uri, str)] if isinstance(uris, list) else []


def registration_refusal(request: HttpRequest) -> HttpResponse | None:
    """The RFC 7591 §3.2.2 error for a registration (or its update) naming more than
    ``MAX_REDIRECT_URIS`` redirect URIs or a plaintext non-loopback one, answered before the
    library stores anything."""
    uris = _requested_redirect_uris(request)
    if len(uris) > MAX_REDIRECT_URIS:
        return _invalid_redirect_uri(
            f"a client registers at most {MAX_REDIRECT_URIS} redirect URIs, not {len(uris)}"
        )
    refused = plaintext_off_loopback(uris)
    if not refused:
        return None
    return _invalid_redirect_uri(
        "plaintext http redirect URIs must be loopback "
        "(http://127.0.0.1:PORT/ or http://[::1]:PORT/): " + " ".join(refused)
    )


def _invalid_redirect_uri(description: str) -> HttpResponse:
    return JsonResponse(
        {"error": "invalid_redirect_uri", "error_description": description}, status=400
    )
