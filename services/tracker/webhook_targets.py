"""Where a webhook may point: the URL and address checks that guard against server-side request forgery.

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


def _allowed_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:
        address = mapped
    if address.is_loopback:
        return bool(current_app.config["WEBHOOKS_ALLOW_LOOPBACK"])
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


def check_addresses(target: Target, addresses: list[str]) -> None:
    for text in addresses:
        address = ipaddress.ip_address(text)
        if not _allowed_address(address):
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
