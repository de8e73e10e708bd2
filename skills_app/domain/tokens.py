"""The bearer token format: its prefix, its length bound, its one hash and the header parser.

Tokens carry 256 random bits, so the stored SHA-256 is safe without a slow hash. The hash
encodes with ``surrogatepass`` so a secret no client could have been given (a lone surrogate,
e.g. from a command-line argument that is not UTF-8) hashes to a miss instead of raising;
generated secrets are ASCII, so the stored hashes are the same either way.
"""

from __future__ import annotations

import hashlib

TOKEN_PREFIX = "xm_"
MAX_TOKEN_LENGTH = 200


def token_attribution(name: str) -> str:
    """How a workspace token is named where it acts (author, commenter, reviewer, audit actor):
    as itself, never as the person who made it (docs/contract.md §16)."""
    return f"token:{name}"


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def bearer_secret(header: str) -> str | None:
    """The secret of an ``Authorization: Bearer …`` header value (scheme case-insensitive), or
    None when the header is missing, names another scheme or carries no secret."""
    scheme, _, value = header.partition(" ")
    secret = value.strip()
    if scheme.lower() != "bearer" or not secret:
        return None
    return secret
