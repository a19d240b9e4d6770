"""One HTTP exchange: send a request through its redirects and stream back the body.

Kept apart from the adapter (which builds requests from tool arguments and turns an
exchange into an outcome, :mod:`._httpresult`) because this is where bytes move: every hop
is guarded (:func:`._httpwire.guard_url`) before it is contacted, each connection goes to
a checked address, and every transport failure is mapped by whether anything was sent.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from execgraph.state.errors import (
    DeadlineExceeded,
    ExecGraphError,
    PermanentError,
    ResponseLostError,
    ToolCancelled,
    TransientError,
)
from execgraph.tools.adapters._bounded_lookup import bounded_resolver
from execgraph.tools.adapters._httpdecode import BoundedDecoder
from execgraph.tools.adapters._httpresult import REDIRECTS, Exchange, transport_error
from execgraph.tools.adapters._httpwatchdog import Watchdog
from execgraph.tools.adapters._httpwire import Target, guard_url
from execgraph.tools.adapters.netguard import HostPattern, Resolver

__all__ = ["Exchanger"]

_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
_MAX_ADDRESSES = 4


@dataclass(frozen=True)
class Exchanger:
    """Sends requests under one adapter's guards.

    Args:
        patterns: The allowed hosts, parsed.
        allow_private: Permit private, loopback and link-local addresses.
        max_bytes: Decoded body bytes kept per response; the rest is never read.
        max_redirects: Hops followed per request.
        resolver: ``getaddrinfo``-compatible name lookup.
        client: The ``httpx.Client`` to send with (called per request: created lazily).
    """

    patterns: tuple[HostPattern, ...]
    allow_private: bool
    max_bytes: int
    max_redirects: int
    resolver: Resolver
    client: Callable[[], httpx.Client]

    def exchange(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        content: bytes | None,
        cancel: threading.Event,
        deadline: float,
        write: bool,
        *,
        before_send: Callable[[], None] | None = None,
    ) -> Exchange:
        """Send, following redirects by hand; every hop is guarded before it is contacted
        (and ``before_send`` runs right before each hop is sent: the fence check)."""
        redirects: list[str] = []
        origin: tuple[str, str, int] | None = None
        watchdog = Watchdog(cancel, deadline)
        resolver = bounded_resolver(self.resolver, deadline, cancel)
        try:
            for _ in range(self.max_redirects + 1):
                target = guard_url(
                    url, self.patterns, allow_private=self.allow_private, resolver=resolver
                )
                if origin is not None and target.origin != origin:
                    # Credentials meant for one origin never follow a redirect to another.
                    headers = {
                        k: v
                        for k, v in headers.items()
                        if k.lower() not in ("authorization", "cookie")
                    }
                origin = target.origin
                if cancel.is_set():
                    raise ToolCancelled("cancelled before the request was sent; nothing was sent")
                if deadline <= time.time():
                    raise DeadlineExceeded("no time left to send the request; nothing was sent")
                if before_send is not None:
                    before_send()
                response = self._send(target, method, headers, content, deadline, write, watchdog)
                location = response.headers.get("location")
                follow = response.status_code in (307, 308) or not write
                if response.status_code in REDIRECTS and location and follow:
                    response.close()
                    url = _redirect_target(method, url, response.status_code, location)
                    redirects.append(url)
                    continue
                return self._read(response, method, url, redirects, watchdog, deadline)
        finally:
            watchdog.stop()
        raise PermanentError(f"more than {self.max_redirects} redirects; gave up")

    def _send(
        self,
        target: Target,
        method: str,
        headers: dict[str, str],
        content: bytes | None,
        deadline: float,
        write: bool,
        watchdog: Watchdog,
    ) -> httpx.Response:
        """Connect to a checked address; map transport failures by whether bytes left.

        Every request gets a fresh connection (``Connection: close``): the watchdog can only
        cut sockets it saw opened. (It also keeps a pinned HTTPS connection, verified for one
        name, from being reused for another name on the same address.)
        """
        hdrs = {
            **headers,
            "Host": target.host_header,
            "Accept-Encoding": "identity",
            "Connection": "close",
        }
        ext: dict[str, Any] = {"trace": watchdog.trace}
        if target.scheme == "https" and not target.numeric:
            # TLS is verified against the name while the socket goes to the checked address.
            ext["sni_hostname"] = target.host
        client = self.client()
        for ip in target.addresses[:_MAX_ADDRESSES]:
            if watchdog.reason is not None:
                break
            left = max(0.001, deadline - time.time())
            request = client.build_request(
                method,
                target.connect_url(ip),
                headers=hdrs,
                content=content,
                timeout=httpx.Timeout(left, connect=min(left, 10.0)),
                extensions=ext,
            )
            try:
                return client.send(request, stream=True, follow_redirects=False)
            except _NOT_SENT:
                continue  # nothing was sent to this address: the next one is safe to try
            except httpx.HTTPError as exc:
                if watchdog.reason is not None:
                    raise _cut_error(watchdog.reason, write, target.host) from None
                if _bad_location(exc):
                    raise _bad_redirect_error(method, target.url, write) from None
                raise transport_error(write, target.host, exc) from None
        if watchdog.reason == "cancelled":
            raise ToolCancelled("cancelled while connecting; nothing was sent")
        if watchdog.reason == "deadline":
            raise DeadlineExceeded("the deadline passed while connecting; nothing was sent")
        raise TransientError(f"could not connect to {target.host!r}; nothing was sent")

    def _read(
        self,
        response: httpx.Response,
        method: str,
        url: str,
        redirects: list[str],
        watchdog: Watchdog,
        deadline: float,
    ) -> Exchange:
        """Stream the body up to the byte budget, decoding it here under the same cap.

        Raw chunks are decoded by :class:`BoundedDecoder`, never by httpx: an encoded body
        is refused once it decodes past ``max_response_bytes``, an identity one truncated.
        """
        kept = bytearray()
        truncated = False
        interrupted: str | None = None
        refused: str | None = None
        try:
            decoder = BoundedDecoder(response.headers.get("content-encoding"), self.max_bytes)
            for raw in response.iter_raw():
                if watchdog.reason is not None or time.time() >= deadline:
                    interrupted = watchdog.reason or "deadline"
                    break
                chunk = decoder.feed(raw)
                room = self.max_bytes - len(kept)
                if len(chunk) > room:
                    kept += chunk[:room]
                    truncated = True
                    break
                kept += chunk
        except PermanentError as exc:  # the body cannot be decoded within the cap
            refused = str(exc)
        except httpx.HTTPError:
            interrupted = watchdog.reason or "dropped"
        finally:
            response.close()
        return Exchange(
            method=method,
            url=url,
            status=response.status_code,
            headers=response.headers,
            body=bytes(kept),
            truncated=truncated or interrupted is not None or refused is not None,
            redirects=redirects,
            interrupted=interrupted,
            refused=refused,
        )


def _redirect_target(method: str, url: str, status: int, location: str) -> str:
    """The absolute URL a redirect names, or a typed error when no parser accepts it."""
    try:
        target = urljoin(url, location)
        parts = urlsplit(target)
        _ = parts.port  # raises for a port that is not a number in range
        httpx.URL(target)  # the client's own parser, which the next hop goes through
    except (ValueError, httpx.InvalidURL):
        raise PermanentError(
            f"{method} {url} answered {status} with a redirect whose Location cannot be "
            "parsed; the redirect was not followed"
        ) from None
    return target


def _bad_location(exc: httpx.HTTPError) -> bool:
    # httpx parses a redirect's Location inside send() even when not following it, and
    # reports a bad one only as this RemoteProtocolError (its text is the only marker).
    return isinstance(exc, httpx.RemoteProtocolError) and str(exc).startswith(
        "Invalid URL in location header"
    )


def _bad_redirect_error(method: str, url: str, write: bool) -> ExecGraphError:
    """A redirect arrived whose Location no parser accepts: typed, and honest for writes."""
    what = f"{method} {url} answered a redirect whose Location cannot be parsed"
    if write:  # which redirect status came is unknown here: a 303 would mean committed
        return ResponseLostError(f"{what}; whether the write took effect is unknown")
    return PermanentError(f"{what}; the redirect was not followed")


def _cut_error(reason: str, write: bool, host: str) -> ExecGraphError:
    """The watchdog cut the connection before a status arrived: say why, honestly."""
    if write:
        return ResponseLostError(
            f"the write to {host!r} was sent but no answer came before the "
            f"{'cancel' if reason == 'cancelled' else 'deadline'}; whether it took effect is "
            "unknown"
        )
    if reason == "cancelled":
        return ToolCancelled(f"cancelled while waiting for {host!r} to answer")
    return TransientError(f"{host!r} did not answer within the call's deadline (total time)")
