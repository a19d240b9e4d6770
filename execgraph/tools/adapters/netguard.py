"""Network guards for adapters that reach out: host allow-lists and address-range checks.

A URL from a model is hostile until proven otherwise. Before any connection is opened the
host must match the adapter's allow-list, and every address it stands for must be public:
every range of IANA's special-purpose registries is refused (explicit tables, see
``DENIED_IPV4`` / ``DENIED_IPV6``), and so are the same addresses hidden in IPv4-mapped,
6to4 or NAT64 IPv6 forms (Teredo is refused whole), or
written the way ``inet_aton`` still accepts them (``2130706433``, ``0177.0.0.1``,
``0x7f.1``, ``127.1``). :mod:`ipaddress` rejects those legacy forms, so they are parsed
here, exactly as the C library would parse them when connecting.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from execgraph.state.errors import (
    PolicyDenied,
    TargetNotFound,
    ToolDeclarationError,
    TransientError,
)

__all__ = [
    "DENIED_IPV4",
    "DENIED_IPV6",
    "HostPattern",
    "IPAddress",
    "Resolver",
    "address_forbidden",
    "host_allowed",
    "parse_host_patterns",
    "parse_numeric_host",
    "resolve_public",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[..., list[tuple[Any, ...]]]

_MALFORMED = "the URL's numeric host address is malformed"
_NUMERIC_PART = re.compile(r"0[xX][0-9a-fA-F]*|[0-9]+")


@dataclass(frozen=True)
class HostPattern:
    """One allow-list entry: ``*``, ``example.com``, ``*.example.com``, optional ``:port``."""

    host: str
    port: int | None = None
    subdomains: bool = False

    def matches(self, host: str, port: int) -> bool:
        """True when ``host`` (canonical, lower case) and ``port`` fit this entry."""
        if self.port is not None and self.port != port:
            return False
        if self.host == "*":
            return True
        if self.subdomains:
            return host.endswith("." + self.host)
        return host == self.host


def _canonical_host(host: str) -> str:
    """Lower-case, strip brackets and a trailing dot; numeric hosts become their IP."""
    text = host.strip().lower().strip("[]").rstrip(".")
    try:
        ip = parse_numeric_host(text)
    except PolicyDenied:  # kept as written; resolve_public refuses it before any connection
        return text
    return str(ip) if ip is not None else text


def parse_host_patterns(entries: Sequence[str]) -> tuple[HostPattern, ...]:
    """Parse allow-list entries once, at adapter construction (bad entries fail loudly)."""
    patterns: list[HostPattern] = []
    for raw in entries:
        text = raw.strip().lower()
        if not text:
            raise ToolDeclarationError("empty allowed-host entry")
        port: int | None = None
        bracketed = re.fullmatch(r"\[([^\]]+)\](?::(\d+))?", text)
        if bracketed:
            text, port_text = bracketed.group(1), bracketed.group(2)
            port = int(port_text) if port_text else None
        elif text.count(":") == 1:
            text, port_text = text.split(":")
            if not port_text.isdigit():
                raise ToolDeclarationError(f"allowed-host entry {raw!r} has a non-numeric port")
            port = int(port_text)
        subdomains = text.startswith("*.")
        host = text[2:] if subdomains else text
        if host != "*":
            host = _canonical_host(host)
        patterns.append(HostPattern(host=host, port=port, subdomains=subdomains))
    return tuple(patterns)


def host_allowed(host: str, port: int, patterns: Sequence[HostPattern]) -> bool:
    """True when any allow-list entry admits ``host:port``."""
    canonical = _canonical_host(host)
    return any(p.matches(canonical, port) for p in patterns)


def parse_numeric_host(host: str) -> IPAddress | None:
    """The address a numeric host denotes, or None for a name.

    Accepts everything ``inet_aton`` accepts (one to four parts, each decimal, octal with a
    leading ``0`` or hex with ``0x``; the last part fills the remaining bytes) plus IPv6.

    Raises:
        PolicyDenied: a number no address matches (too many parts, out of range, 8 or 9 in
            an octal part): such a host is refused, never guessed at.
    """
    text = host.strip().strip("[]").rstrip(".")
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    parts = text.split(".")
    if not all(_NUMERIC_PART.fullmatch(p) for p in parts):
        return None
    if len(parts) > 4:
        raise PolicyDenied(_MALFORMED)  # too many parts
    numbers: list[int] = []
    for part in parts:
        if part[:2].lower() == "0x":
            numbers.append(int(part[2:] or "0", 16))
        elif len(part) > 1 and part.startswith("0"):
            try:
                numbers.append(int(part, 8))
            except ValueError:  # 8 or 9 in an octal part: inet_aton refuses those too
                raise PolicyDenied(_MALFORMED) from None
        else:
            numbers.append(int(part))
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (4 - len(head)):
        raise PolicyDenied(_MALFORMED)  # out of range
    value = 0
    for n in head:
        value = value * 256 + n
    value = value * 256 ** (4 - len(head)) + last
    return ipaddress.IPv4Address(value)


def _networks(*cidrs: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(c) for c in cidrs)


# IANA's IPv4 and IPv6 special-purpose address registries, written out: Python's own
# tables (``is_private`` / ``is_global``) lag behind them (3.11 lets 192.0.0.8, 192.88.99.1
# and the deprecated site-local fec0::/10 through), and a guard must not change with them.
DENIED_IPV4 = _networks(
    "0.0.0.0/8",  # "this network"
    "10.0.0.0/8",  # private
    "100.64.0.0/10",  # carrier-grade NAT
    "127.0.0.0/8",  # loopback
    "169.254.0.0/16",  # link-local (cloud metadata endpoints)
    "172.16.0.0/12",  # private
    "192.0.0.0/24",  # IETF protocol assignments
    "192.0.2.0/24",  # documentation
    "192.88.99.0/24",  # 6to4 relay anycast (deprecated)
    "192.168.0.0/16",  # private
    "198.18.0.0/15",  # benchmarking
    "198.51.100.0/24",  # documentation
    "203.0.113.0/24",  # documentation
    "224.0.0.0/4",  # multicast
    "240.0.0.0/4",  # reserved, and 255.255.255.255 (limited broadcast)
)
DENIED_IPV6 = _networks(
    "::/128",  # unspecified
    "::1/128",  # loopback
    "::/96",  # IPv4-compatible (deprecated)
    "64:ff9b:1::/48",  # local-use IPv4/IPv6 translation
    "100::/64",  # discard-only
    "2001::/23",  # IETF protocol assignments (Teredo, ORCHID, benchmarking, ...)
    "2001:db8::/32",  # documentation
    "3fff::/20",  # documentation
    "5f00::/16",  # segment routing SIDs
    "fc00::/7",  # unique local
    "fe80::/10",  # link-local
    "fec0::/10",  # site-local (deprecated)
    "ff00::/8",  # multicast
)
# Ranges that carry an IPv4 address: judged by the IPv4 address inside (an IPv6-only
# network reaches public IPv4 hosts through NAT64, so these are not refused wholesale).
_MAPPED = ipaddress.ip_network("::ffff:0:0/96")
_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")  # SIIT's IPv4-translated addresses
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_SIXTOFOUR = ipaddress.ip_network("2002::/16")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv4-mapped, IPv4-translated, NAT64 or 6to4 address carries."""
    if ip in _MAPPED or ip in _TRANSLATED or ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in _SIXTOFOUR:
        return ipaddress.IPv4Address((int(ip) >> 80) & 0xFFFFFFFF)
    return None


def address_forbidden(ip: IPAddress) -> bool:
    """True for any address in a special-purpose range (or hiding an IPv4 one that is).

    Explicit deny lists first; Python's ``is_global`` second, as a net for ranges IANA adds
    that the lists above do not know yet.
    """
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded_ipv4(ip)
        if inner is not None:
            return address_forbidden(inner)
        if any(ip in net for net in DENIED_IPV6):
            return True
    elif any(ip in net for net in DENIED_IPV4):
        return True
    return not ip.is_global


def resolve_public(
    host: str,
    port: int,
    *,
    allow_private: bool,
    resolver: Resolver = socket.getaddrinfo,
) -> list[IPAddress]:
    """Every address ``host`` stands for, all checked; the caller connects to these only.

    Connecting to a checked address (instead of letting the HTTP client resolve the name
    again) closes the DNS-rebinding gap between the check and the connection.

    Raises:
        PolicyDenied: a malformed numeric host, or any address in a refused range.
        TargetNotFound: the name does not resolve.
        TransientError: the resolver failed temporarily.
    """
    text = host.strip().strip("[]").rstrip(".")
    numeric = parse_numeric_host(text)  # PolicyDenied for a malformed number
    if numeric is not None:
        addresses: list[IPAddress] = [numeric]
    else:
        try:
            infos = resolver(text, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            if exc.errno == socket.EAI_AGAIN:
                raise TransientError(f"name lookup for {text!r} failed temporarily") from None
            raise TargetNotFound(f"host {text!r} does not resolve") from None
        except (UnicodeError, OSError):
            raise TargetNotFound(f"host {text!r} does not resolve") from None
        addresses = []
        for info in infos:
            ip = ipaddress.ip_address(str(info[4][0]).split("%")[0])
            if ip not in addresses:
                addresses.append(ip)
        if not addresses:
            raise TargetNotFound(f"host {text!r} does not resolve")
    if not allow_private and any(address_forbidden(ip) for ip in addresses):
        raise PolicyDenied(
            f"host {text!r} is or resolves to a private, loopback, link-local or otherwise "
            "non-public address; this adapter does not allow those"
        )
    return addresses
