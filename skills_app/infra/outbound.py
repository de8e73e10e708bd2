"""The one outbound guard (ARCHITECTURE §12): every request to a URL a tenant chose (URL import,
webhooks) is checked here first.

http or https, no credentials in the URL; the host is resolved once and refused if any address
is not global (private, loopback, link-local, …) unless ``allow_private``; the connection then
goes to that validated address (Host and TLS still use the name), so DNS rebinding finds
nothing. Callers follow redirects by hand, re-checking each here, and bound time and size."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from skills_app.domain.text import control_character_reason
from skills_app.errors import ValidationFailed, XmemoError

DEFAULT_PORTS = {"http": 80, "https": 443}

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# Builds the caller's refusal error from the URL and a reason ("… is not a public address").
Refuse = Callable[[str, str], XmemoError]


@dataclass(frozen=True)
class Target:
    """One request's destination, pinned to an address that passed the checks."""

    url: str  # the validated address as host
    host_header: str
    hostname: str


def is_public(address: Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return address.is_global and not (
        address.is_multicast or address.is_reserved or address.is_link_local or address.is_loopback
    )


def split_url(url: str, refuse: Refuse) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of an http(s) URL without credentials, else ``refuse``."""
    # urlsplit silently drops tab, CR and LF; a URL holding them is refused, not rewritten.
    control = control_character_reason(url)
    if control:
        raise refuse(url, f"it {control}")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise refuse(url, f"it is not a valid URL ({exc})") from exc
    if parts.scheme not in DEFAULT_PORTS:
        raise refuse(url, "only http and https URLs are accepted")
    if parts.username is not None or parts.password is not None:
        raise refuse(url, "URLs with credentials are not accepted")
    host = (parts.hostname or "").rstrip(".")
    try:
        host = host.encode("idna").decode("ascii")
    except UnicodeError as exc:
        raise refuse(url, "the host name is not valid") from exc
    if not host:
        raise refuse(url, "the URL has no host")
    return parts.scheme, host, port or DEFAULT_PORTS[parts.scheme]


def resolve(url: str, host: str, port: int, *, allow_private: bool, refuse: Refuse) -> Address:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise ValidationFailed(
            f"The host of {url} could not be resolved ({exc}).", details={"url": url}
        ) from exc
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
    if not allow_private:
        for address in addresses:
            if not is_public(address):
                raise refuse(url, f"{host} resolves to {address}, which is not a public address")
    if not addresses:
        raise ValidationFailed(f"The host of {url} has no address.", details={"url": url})
    return next((a for a in addresses if a.version == 4), addresses[0])


def pin(url: str, *, allow_private: bool, refuse: Refuse) -> Target:
    """Check ``url`` and pin it to one validated address."""
    scheme, host, port = split_url(url, refuse)
    address = resolve(url, host, port, allow_private=allow_private, refuse=refuse)
    parts = urlsplit(url)
    literal = f"[{address}]" if address.version == 6 else str(address)
    host_text = f"[{host}]" if ":" in host else host
    default = port == DEFAULT_PORTS[scheme]
    return Target(
        url=urlunsplit((scheme, f"{literal}:{port}", parts.path or "/", parts.query, "")),
        host_header=host_text if default else f"{host_text}:{port}",
        hostname=host,
    )
