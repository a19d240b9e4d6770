"""HTTP plumbing for the HTTP adapter: URL guarding, header rules, status mapping.

Kept apart from the adapter so each file stays readable; nothing here sends a request.
"""

from __future__ import annotations

import email.utils
import re
import time
from dataclasses import dataclass
from datetime import UTC
from urllib.parse import urlsplit, urlunsplit

from execgraph.state.errors import (
    DomainViolation,
    ExecGraphError,
    PermanentError,
    PolicyDenied,
    ResponseLostError,
    SchemaViolation,
    TargetNotFound,
    TransientError,
)
from execgraph.tools.adapters.netguard import (
    HostPattern,
    IPAddress,
    Resolver,
    host_allowed,
    parse_numeric_host,
    resolve_public,
)

__all__ = [
    "FORBIDDEN_HEADERS",
    "REQUEST_ID_HEADERS",
    "Target",
    "check_headers",
    "guard_url",
    "parse_retry_after",
    "status_error",
]

MAX_RETRY_AFTER_S = 24 * 3600.0
FORBIDDEN_HEADERS = frozenset(
    {
        "host",
        "x-execgraph-fence",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "upgrade",
        "te",
        "trailer",
        "proxy-authorization",
        "proxy-connection",
        "idempotency-key",
        "accept-encoding",
    }
)
REQUEST_ID_HEADERS = ("x-request-id", "request-id", "x-amzn-requestid", "x-correlation-id")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class Target:
    """A checked request target: where to connect (checked addresses) and what to claim."""

    url: str
    scheme: str
    host: str
    port: int
    path_query: str
    addresses: tuple[IPAddress, ...]
    numeric: bool

    @property
    def host_header(self) -> str:
        """``Host`` header value: the name asked for, not the pinned address."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if _DEFAULT_PORTS[self.scheme] == self.port else f"{host}:{self.port}"

    @property
    def origin(self) -> tuple[str, str, int]:
        """Scheme, host and port: credentials never cross to another origin."""
        return (self.scheme, self.host, self.port)

    def connect_url(self, ip: IPAddress) -> str:
        """The URL with the host replaced by one checked address (no second DNS lookup)."""
        netloc = f"[{ip}]" if ip.version == 6 else str(ip)
        return f"{self.scheme}://{netloc}:{self.port}{self.path_query}"


def guard_url(
    url: str,
    patterns: tuple[HostPattern, ...],
    *,
    allow_private: bool,
    resolver: Resolver,
) -> Target:
    """Check one URL (a request or a redirect hop) before anything is sent to it.

    Raises:
        PolicyDenied: scheme, credentials, host or address not allowed (nothing sent).
        DomainViolation: the URL cannot be parsed.
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise DomainViolation("the URL cannot be parsed") from None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise PolicyDenied("only http and https URLs are allowed")
    if parts.username is not None or parts.password is not None:
        raise PolicyDenied("credentials inside URLs are not allowed")
    raw_host = (parts.hostname or "").rstrip(".")
    if not raw_host:
        raise DomainViolation("the URL has no host")
    try:
        host = raw_host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        raise DomainViolation("the URL's host name is not a valid domain name") from None
    port = port or _DEFAULT_PORTS[scheme]
    if not host_allowed(host, port, patterns):
        raise PolicyDenied(f"host {host!r} (port {port}) is not on this adapter's allow-list")
    addresses = resolve_public(host, port, allow_private=allow_private, resolver=resolver)
    try:
        numeric = parse_numeric_host(host) is not None
    except PolicyDenied:  # pragma: no cover - resolve_public refused it already
        numeric = True
    if numeric:
        host = str(addresses[0])
    path_query = urlunsplit(("", "", parts.path or "/", parts.query, ""))
    return Target(url, scheme, host, port, path_query, tuple(addresses), numeric)


def check_headers(headers: dict[str, str]) -> dict[str, str]:
    """Refuse headers that could smuggle a different host, framing or idempotency key.

    Runs as a pydantic field validator: a SchemaViolation (a ValueError) raised here becomes
    one of the input model's validation errors.
    """
    if len(headers) > 50:
        raise SchemaViolation("too many headers")
    for name, value in headers.items():
        if not _HEADER_NAME.fullmatch(name):
            raise SchemaViolation(f"invalid header name {name!r}")
        if name.lower() in FORBIDDEN_HEADERS or name.lower().startswith("proxy-"):
            raise SchemaViolation(f"header {name!r} is set by the runtime and may not be given")
        if any(c in value for c in "\r\n\x00"):
            raise SchemaViolation(f"header {name!r} contains a line break or NUL")
    return headers


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (delta-seconds or HTTP-date), capped."""
    if not value:
        return None
    text = value.strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return min(float(text), MAX_RETRY_AFTER_S)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    delay = when.timestamp() - (time.time() if now is None else now)
    return min(max(0.0, delay), MAX_RETRY_AFTER_S)


def status_error(
    status: int, *, write: bool, what: str, retry_after: float | None
) -> ExecGraphError | None:
    """The typed error an HTTP status means, or None for success.

    A 5xx answer to a write (other than 503) may come after the server committed, so it is
    UNKNOWN (reconcile first); a 503, 408, 425 or 429 means "not done, come back later".
    """
    if 200 <= status < 300:
        return None
    if status in (404, 410):
        return TargetNotFound(f"{what} answered {status}: no such resource")
    if status in (408, 425, 429, 503):
        return TransientError(
            f"{what} answered {status}: try again later", retry_after_s=retry_after
        )
    if 400 <= status < 500:
        return PermanentError(f"{what} refused the request with status {status}")
    if status >= 500 and write:
        return ResponseLostError(
            f"{what} failed with status {status} after receiving the write; whether it took "
            "effect is unknown and must be reconciled"
        )
    if status >= 500:
        return TransientError(f"{what} failed with status {status}", retry_after_s=retry_after)
    return PermanentError(f"{what} answered with unexpected status {status}")
