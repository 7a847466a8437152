"""Where the server may send a request of its own (webhooks, an SSO provider, a browser's push
service): the URL and address checks that guard against server-side request forgery.

Only ``https`` URLs, or ``http`` to a loopback address; hosts resolving to
private, link-local, multicast or reserved addresses are refused when the
webhook is saved (``validate_url``) and again at each delivery
(``services.tracker.webhook_delivery.post``), which connects to the address
that was checked, so a DNS answer that changes in between cannot redirect it.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from flask import current_app

from services.errors import FieldError, ValidationFailed


class RefusedAddress(Exception):
    """The URL names a place a webhook may not reach."""


# NAT64 prefixes (RFC 6052 well-known, RFC 8215 local-use): on an IPv6-only network with
# DNS64 an address under them reaches the IPv4 address it embeds.
_NAT64_WELL_KNOWN = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL_USE = ipaddress.ip_network("64:ff9b:1::/48")
# Where RFC 6052 puts the IPv4 octets for each prefix length (octet 8 is the reserved "u").
_RFC6052_OCTETS = {48: (6, 7, 9, 10), 56: (7, 9, 10, 11), 64: (9, 10, 11, 12), 96: (12, 13, 14, 15)}


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries to a translator or tunnel: IPv4-compatible,
    6to4, Teredo (its server and its client) and NAT64. The local-use NAT64 prefix may be any
    RFC 6052 length, so every layout it allows is returned."""
    packed = address.packed
    found: list[ipaddress.IPv4Address] = []
    if packed[:12] == bytes(12) and int(address) > 1:  # ::a.b.c.d (not :: or ::1)
        found.append(ipaddress.IPv4Address(packed[12:]))
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    if address in _NAT64_WELL_KNOWN:
        found.append(ipaddress.IPv4Address(packed[12:]))
    elif address in _NAT64_LOCAL_USE:
        found.extend(
            ipaddress.IPv4Address(bytes(packed[i] for i in octets)) for octets in _RFC6052_OCTETS.values()
        )
    return found


def _allowed_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address, allow_loopback: bool) -> bool:
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:  # ::ffff:a.b.c.d is that IPv4 address, nothing more
            return _allowed_address(address.ipv4_mapped, allow_loopback)
        # A wrapper must be allowed itself (Teredo never is) and so must what it wraps.
        if not all(_allowed_address(inner, allow_loopback) for inner in _embedded_ipv4(address)):
            return False
    if address.is_loopback:
        return allow_loopback
    return address.is_global and not address.is_multicast


def _is_loopback_name(host: str) -> bool:
    host = host.lower().rstrip(".")
    return host == "localhost" or host.endswith(".localhost")


def _literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (empty when it does not resolve)."""
    literal = _literal(host)
    if literal is not None:
        return [str(literal)]
    try:
        answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return list(dict.fromkeys(str(answer[4][0]).split("%")[0] for answer in answers))


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str


def parse_url(url: str) -> Target:
    """The URL's parts, or ``RefusedAddress`` saying why it cannot be a webhook's."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise RefusedAddress("Not a valid URL") from exc
    scheme = parts.scheme.lower()
    host = parts.hostname or ""
    if scheme not in ("https", "http") or not host:
        raise RefusedAddress("Must be an https URL (or http to a loopback address)")
    if parts.username is not None or parts.password is not None:
        raise RefusedAddress("Must not carry a user name or password")
    if parts.fragment:
        raise RefusedAddress("Must not have a fragment (#...)")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(scheme, host, port or (443 if scheme == "https" else 80), path)


def addresses_of(target: Target) -> list[str]:
    """The addresses a connection to ``target`` may use: a ``localhost`` name is loopback
    without asking DNS; any other name is resolved (empty when it does not resolve)."""
    if _literal(target.host) is None and _is_loopback_name(target.host):
        return ["127.0.0.1"]
    return _resolve(target.host, target.port)


def check_addresses(target: Target, addresses: list[str], allow_loopback: bool | None = None) -> None:
    """Refuse what a server-side request may not reach (``allow_loopback`` defaults to the
    webhooks' setting)."""
    if allow_loopback is None:
        allow_loopback = bool(current_app.config["WEBHOOKS_ALLOW_LOOPBACK"])
    for text in addresses:
        address = ipaddress.ip_address(text)
        if not _allowed_address(address, allow_loopback):
            raise RefusedAddress(f"{target.host} is a private, link-local, multicast or reserved address")
    if target.scheme == "http" and not all(ipaddress.ip_address(a).is_loopback for a in addresses):
        raise RefusedAddress("Plain http is allowed only to a loopback address; use https")


def validate_url(url: str) -> None:
    """Refuse, as a 400 naming ``url``, what a webhook may not point at (checked again at delivery)."""
    try:
        target = parse_url(url)
        # A name that does not resolve yet is accepted: its deliveries fail until it does.
        addresses = addresses_of(target)
        if target.scheme == "http" and not addresses:
            raise RefusedAddress("Plain http is allowed only to a loopback address; use https")
        check_addresses(target, addresses)
    except RefusedAddress as exc:
        raise ValidationFailed(
            [FieldError(("body", "url"), str(exc), reason="webhook_url_refused")], "Validation failed"
        ) from None
