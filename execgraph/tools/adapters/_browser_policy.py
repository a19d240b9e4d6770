"""Host allow-list of :mod:`execgraph.tools.adapters.browser` (private helper).

Entries are ``host``, ``*.domain`` (any subdomain, not the domain itself) or
``host:port``. A URL is allowed when its scheme is http(s) (ws(s) for sockets), its host and
port match an entry and, unless ``allow_private``, its host is not a loopback, private,
link-local or otherwise reserved address.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

from execgraph.state.errors import PolicyDenied, ToolDeclarationError

__all__ = ["HostPolicy"]

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_NO_NETWORK = ("data", "blob", "about")  # content the browser makes up locally
_HOST = re.compile(r"^(\*\.)?[a-z0-9_.\-:]+$")
_UNSAFE = re.compile(r"[\s\\\x00-\x1f\x7f]")


def _idna(host: str) -> str:
    host = host.strip().lower().rstrip(".")
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return ""


class HostPolicy:
    """Decides, for any URL the browser may touch, whether it may be contacted."""

    def __init__(self, allowed_hosts: Iterable[str], *, allow_private: bool = False) -> None:
        self.allow_private = allow_private
        self._rules = [self._parse(entry) for entry in allowed_hosts]
        if not self._rules:
            raise ToolDeclarationError("allowed_hosts must name at least one host")
        self._private: dict[str, bool] = {}

    @staticmethod
    def _parse(entry: str) -> tuple[str, int | None]:
        text = entry.strip().lower()
        if "://" in text or "/" in text:
            raise ToolDeclarationError(
                f"allowed_hosts entries are host or host:port, got {entry!r}"
            )
        port = ""
        if text.startswith("["):  # [v6]:port
            text, _, rest = text[1:].partition("]")
            port = rest.removeprefix(":")
        elif text.count(":") == 1:
            text, port = text.split(":")
        host = _idna(text)
        if not host or not _HOST.match(host) or (port and not port.isdigit()):
            raise ToolDeclarationError(f"not a valid allowed_hosts entry: {entry!r}")
        return host, int(port) if port else None

    # ------------------------------------------------------------------ decisions

    @staticmethod
    def _target(url: str) -> tuple[str, str, int] | None:
        try:
            parts = urlsplit(url)
            scheme = parts.scheme.lower()
            host = _idna(parts.hostname or "")
            port = parts.port or _DEFAULT_PORTS.get(scheme)
        except ValueError:
            return None
        if not host or port is None:
            return None
        return scheme, host, port

    def _listed(self, host: str, port: int) -> bool:
        for pattern, want_port in self._rules:
            if want_port is not None and want_port != port:
                continue
            if pattern.startswith("*."):
                if host.endswith(pattern[1:]):
                    return True
            elif host == pattern:
                return True
        return False

    def _is_private(self, host: str) -> bool:
        if host == "localhost" or host.endswith(".localhost"):
            return True
        if host not in self._private:
            try:
                addresses = [ipaddress.ip_address(host.strip("[]"))]
            except ValueError:
                try:
                    infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
                except OSError:
                    infos = []  # unresolvable: the browser cannot reach it either
                addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
            self._private[host] = any(_private_ip(ip) for ip in addresses)
        return self._private[host]

    def allows_request(self, url: str) -> bool:
        """True if a request (any kind, any frame) to ``url`` may go out."""
        scheme = url.split(":", 1)[0].lower()
        if scheme in _NO_NETWORK:
            return True
        target = self._target(url)
        if target is None or target[0] not in _DEFAULT_PORTS:
            return False
        _, host, port = target
        return self._listed(host, port) and (self.allow_private or not self._is_private(host))

    def check_navigation(self, url: str) -> None:
        """Raise PolicyDenied, before anything is contacted, unless ``url`` may be opened."""
        if _UNSAFE.search(url):
            raise PolicyDenied("the URL contains whitespace, backslashes or control characters")
        target = self._target(url)
        if target is None or target[0] not in ("http", "https"):
            raise PolicyDenied("only http and https URLs with a host may be opened")
        _, host, port = target
        if not self._listed(host, port):
            raise PolicyDenied(
                f"{host}:{port} is not on the browser allow-list; it was not contacted"
            )
        if not self.allow_private and self._is_private(host):
            raise PolicyDenied(
                f"{host} is a loopback, private or reserved address; it was not contacted"
            )

    def describe(self, url: str) -> str:
        """``host:port`` of a URL (or its scheme), for reports of blocked requests."""
        target = self._target(url)
        return f"{target[1]}:{target[2]}" if target else url.split(":", 1)[0]

    def resolver_rules(self) -> str:
        """Chromium ``--host-resolver-rules``: every host (and port) not listed resolves to
        nothing.

        This holds for requests Playwright's routing never sees (redirect hops, workers,
        prefetches), so it is the outer wall. A ``host:port`` entry maps to itself and stops
        matching there; whatever falls through to ``MAP *`` is "not found".
        """
        rules: list[str] = []
        for host, port in self._rules:
            name = f"[{host}]" if ":" in host else host
            rules.append(f"EXCLUDE {name}" if port is None else f"MAP {name}:{port} {name}")
        return ", ".join([*dict.fromkeys(rules), "MAP * ~NOTFOUND"])


def _private_ip(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_reserved
        or ip.is_multicast
        or ip.is_unspecified
    )
