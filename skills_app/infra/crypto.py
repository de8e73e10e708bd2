"""Encryption at rest for workspace secrets (docs/contract.md §2) and webhook signing secrets:
``cryptography``'s Fernet behind a ``MultiFernet``.

Keys: ``XMEMO_SECRETS_KEY``, one or more comma-separated Fernet keys; the first encrypts, every
key decrypts. A key derived from ``SECRET_KEY`` (HKDF-SHA256) comes last: it encrypts while no
key is set (the embedded default) and stays to decrypt what it wrote. Rotation: prepend a new
key, run ``manage.py rotate_workspace_secrets``, remove the old one (docs/production.md). The
key is read per call, so settings overrides apply."""

from __future__ import annotations

import base64

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from skills_app import errors

_DERIVATION_INFO = b"xmemo workspace secrets v1"


def _derived_key(secret_key: str) -> bytes:
    raw = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_DERIVATION_INFO).derive(
        secret_key.encode("utf-8")
    )
    return base64.urlsafe_b64encode(raw)


def _box() -> MultiFernet:
    try:
        configured = [Fernet(key.encode("ascii")) for key in settings.XMEMO_SECRETS_KEY]
    except (ValueError, UnicodeEncodeError) as exc:
        raise ImproperlyConfigured(
            "XMEMO_SECRETS_KEY must be comma-separated Fernet keys (32 url-safe base64 bytes)."
        ) from exc
    return MultiFernet([*configured, Fernet(_derived_key(settings.SECRET_KEY))])


def secret_encrypt(value: str) -> str:
    return _box().encrypt(value.encode("utf-8")).decode("ascii")


def secret_open(ciphertext: str) -> str:
    """The plain value (``InvalidToken`` when no configured key opens it)."""
    return _box().decrypt(ciphertext.encode("ascii")).decode("utf-8")


def secret_decrypt(ciphertext: str, *, name: str) -> str:
    """The plain value; ``JobFailed`` naming the secret when no configured key opens it."""
    try:
        return secret_open(ciphertext)
    except InvalidToken as exc:
        raise errors.JobFailed(
            f"The workspace secret {name} cannot be decrypted with the configured keys "
            "(XMEMO_SECRETS_KEY); set it again.",
            details={"secret": name},
        ) from exc


def secret_reencrypt(ciphertext: str) -> str:
    """The same value encrypted with the first key (``InvalidToken`` if no key opens it)."""
    return _box().rotate(ciphertext.encode("ascii")).decode("ascii")
