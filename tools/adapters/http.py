"""The HTTP adapter: ``http_get`` (read) and ``http_post`` / ``http_put`` / ``http_delete``.

Security (DESIGN §10): every request and every redirect hop is checked before it is sent —
scheme, no credentials in the URL, host allow-list, and (unless ``allow_private``) every
address the host stands for must be public (see :mod:`execgraph.tools.adapters.netguard`). The
connection goes to the checked address itself, so a DNS answer cannot change between the
check and the connect. Redirects are followed by hand; a hop to a disallowed host is refused
without contacting it. Responses are streamed and cut at ``max_response_bytes``.

Outcome mapping:

==========================================  ===============================================
what happened                                result
==========================================  ===============================================
URL / hop not allowed                        ``PolicyDenied`` (DENIED; nothing sent there)
cancelled / no time left before sending      ``ToolCancelled`` / ``DeadlineExceeded``
connect failed (refused, DNS, TLS, timeout)  ``TransientError`` — nothing was sent
write sent, then connection dropped, read   ``ResponseLostError`` (UNKNOWN) — reconcile via
timed out, deadline or cancel before status  the status endpoint, never retry blindly
read: deadline / cancel before the status    ``TransientError`` / ``ToolCancelled``
redirect Location no parser accepts          ``PermanentError`` (a write: ``ResponseLostError``)
encoded body decodes past the byte budget,   ``PermanentError`` naming the cap (a write keeps
or in an encoding other than gzip/deflate    its status; the refusal is in ``data``)
2xx                                          ``AdapterOutput`` (committed=True for writes)
404 / 410                                    ``TargetNotFound``
408 / 425 / 429 / 503                        ``TransientError(retry_after_s=Retry-After)``
other 4xx                                    ``PermanentError``
5xx to a read / to a write                   ``TransientError`` / ``ResponseLostError``
write answered 301/302/303                   not followed; ``AdapterOutput`` with
                                             ``location``; committed=True for 303, else None
==========================================  ===============================================

Errors raised after a response arrived carry the observation (status, bounded body,
evidence); read it with :func:`output_of`.
Writes send ``Idempotency-Key: ctx.idempotency_key`` on every attempt and hop.

Time: the call's deadline is a *total* for the whole exchange (every hop, header and body
byte): a watchdog (:mod:`._httpwatchdog`) shuts the connection down when it passes or when
the call is cancelled, so a server dripping its headers cannot hold a pool thread. Size:
``max_response_bytes`` caps *decoded* bytes while streaming (:mod:`._httpdecode`); an encoded
body past it is refused, never decoded whole.

The name lookup is bounded by the same deadline (:mod:`._bounded_lookup`).

Limits: connections are not kept alive (the watchdog can cut only sockets it saw opened);
a given ``client`` whose transport is not httpcore-based keeps only httpx's per-read
timeout.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal
from urllib.parse import quote, urljoin, urlsplit

import httpx
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from execgraph.state.contracts import Evidence
from execgraph.state.errors import (
    DeadlineExceeded,
    ExecGraphError,
    PermanentError,
    ResponseLostError,
    SchemaViolation,
    ToolCancelled,
    ToolDeclarationError,
    TransientError,
)
from execgraph.tools.adapters._bounded_lookup import bounded_resolver
from execgraph.tools.adapters._httpdecode import BoundedDecoder
from execgraph.tools.adapters._httpresult import (
    REDIRECTS,
    Exchange,
    build_outcome,
    committed_from_status,
    transport_error,
)
from execgraph.tools.adapters._httpwatchdog import Watchdog
from execgraph.tools.adapters._httpwire import (
    Target,
    check_headers,
    guard_url,
)
from execgraph.tools.adapters.netguard import Resolver, parse_host_patterns
from execgraph.tools.invocation import AdapterOutput, InvokeContext, output_of
from execgraph.tools.spec import Runner, ToolSpec

__all__ = ["HttpAdapter", "HttpGetArgs", "HttpWriteArgs", "output_of"]

_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
_MAX_ADDRESSES = 4


class HttpGetArgs(BaseModel):
    """Arguments of ``http_get``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(min_length=1, max_length=8192, description="Absolute http(s) URL")
    headers: dict[str, str] = Field(default_factory=dict, description="Extra request headers")
    timeout_s: float | None = Field(default=None, gt=0, description="Time limit in seconds")

    @field_validator("headers")
    @classmethod
    def _safe_headers(cls, value: dict[str, str]) -> dict[str, str]:
        return check_headers(value)


class HttpWriteArgs(HttpGetArgs):
    """Arguments of ``http_post`` / ``http_put`` / ``http_delete``: a text or JSON body."""

    body: str | None = Field(default=None, max_length=10_000_000, description="Raw body")
    json_body: Any = Field(default=None, description="Body sent as JSON")

    @model_validator(mode="after")
    def _one_body(self) -> HttpWriteArgs:
        if self.body is not None and self.json_body is not None:
            raise SchemaViolation("give either body or json_body, not both")
        return self


class HttpAdapter:
    """Guarded HTTP client tools.

    Args:
        allowed_hosts: ``example.com``, ``*.example.com``, ``host:port``, ``[::1]:8080`` or
            ``*`` (any host — private addresses still refused unless ``allow_private``).
        allow_private: Permit private, loopback and link-local addresses (tests, intranets).
        max_response_bytes: Bytes read per response; the rest is never read.
        client: An ``httpx.Client`` to use (not closed by :meth:`close`); default: our own
            with ``trust_env=False`` so proxy variables cannot reroute checked requests.
        status_endpoints: URL prefix -> status URL template (absolute or relative to the
            request URL) with ``{idempotency_key}`` / ``{call_id}``; used by ``reconcile``.
            The endpoint answers 2xx (optionally JSON ``{"committed": bool}``) or 404.
        max_redirects: Hops followed per request.
        default_timeout_s: Limit when neither the call nor the context gives one.
        resolver: ``getaddrinfo``-compatible function (the stdlib one by default).
        version: Tool version approvals bind to.
    """

    name = "http"

    def __init__(
        self,
        allowed_hosts: Sequence[str],
        *,
        allow_private: bool = False,
        max_response_bytes: int = 2 * 1024 * 1024,
        client: httpx.Client | None = None,
        status_endpoints: Mapping[str, str] | None = None,
        max_redirects: int = 5,
        default_timeout_s: float = 30.0,
        resolver: Resolver = socket.getaddrinfo,
        version: str = "1.0.0",
    ) -> None:
        self._patterns = parse_host_patterns(allowed_hosts)
        self._allow_private = allow_private
        self._max_bytes = max_response_bytes
        self._own_client = client is None
        self._client = client
        self._client_lock = threading.Lock()
        self._status_endpoints = dict(status_endpoints or {})
        for template in self._status_endpoints.values():
            try:
                template.format(idempotency_key="k", call_id="c")
            except (KeyError, IndexError, ValueError):
                raise ToolDeclarationError(
                    f"status endpoint template {template!r} may only use "
                    "{idempotency_key} and {call_id}"
                ) from None
        self._max_redirects = max_redirects
        self._default_timeout_s = default_timeout_s
        self._resolver = resolver
        self._version = version

    def tools(self) -> list[ToolSpec]:
        """``http_get`` (read) and ``http_post`` / ``http_put`` / ``http_delete`` (write)."""
        hosts = ", ".join(p.host + (f":{p.port}" if p.port else "") for p in self._patterns)
        get = ToolSpec(
            name="http_get",
            version=self._version,
            description=f"GET an http(s) URL on an allowed host ({hosts}).",
            input_model=HttpGetArgs,
            effect="read",
            run=self._get,
            timeout_s=self._default_timeout_s,
        )
        writes = [
            ToolSpec(
                name=f"http_{method.lower()}",
                version=self._version,
                description=f"{method} to an http(s) URL on an allowed host ({hosts}); "
                "sent with an Idempotency-Key.",
                input_model=HttpWriteArgs,
                effect="write",
                run=self._writer(method),
                reconcile=self._reconcile,
                timeout_s=self._default_timeout_s,
            )
            for method in ("POST", "PUT", "DELETE")
        ]
        return [get, *writes]

    def close(self) -> None:
        """Close the HTTP client if this adapter created it."""
        with self._client_lock:
            if self._own_client and self._client is not None:
                self._client.close()
                self._client = None

    def _http(self) -> httpx.Client:
        """The client, created on first use (building TLS contexts is not free)."""
        with self._client_lock:
            if self._client is None:
                self._client = httpx.Client(trust_env=False, follow_redirects=False)
            return self._client

    # ------------------------------------------------------------------ tools

    def _get(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        assert isinstance(args, HttpGetArgs)
        deadline = self._deadline(args.timeout_s, ctx)
        ex = self._exchange("GET", args.url, dict(args.headers), None, ctx.cancel, deadline, False)
        return build_outcome(ex, ctx, write=False)

    def _writer(self, method: Literal["POST", "PUT", "DELETE"]) -> Runner:
        def run(args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
            assert isinstance(args, HttpWriteArgs)
            headers = {**args.headers, "Idempotency-Key": _idempotency_key(ctx)}
            content: bytes | None = None
            if args.json_body is not None:
                content = json.dumps(args.json_body).encode()
                headers.setdefault("Content-Type", "application/json")
            elif args.body is not None:
                content = args.body.encode()
            deadline = self._deadline(args.timeout_s, ctx)
            ex = self._exchange(method, args.url, headers, content, ctx.cancel, deadline, True)
            return build_outcome(ex, ctx, write=True)

        return run

    def _reconcile(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput | None:
        """Ask the declared status endpoint whether the write with this key took effect."""
        assert isinstance(args, HttpWriteArgs)
        prefixes = [p for p in self._status_endpoints if args.url.startswith(p)]
        if not prefixes:
            return None
        template = self._status_endpoints[max(prefixes, key=len)]
        relative = template.format(
            idempotency_key=quote(_idempotency_key(ctx), safe=""),
            call_id=quote(ctx.call_id, safe=""),
        )
        status_url = urljoin(args.url, relative)
        # A probe runs after a cancel or a lost deadline: it gets its own, fresh limits.
        deadline = time.time() + min(self._default_timeout_s, 10.0)
        try:
            ex = self._exchange("GET", status_url, {}, None, threading.Event(), deadline, False)
        except ExecGraphError:
            return None
        committed = committed_from_status(ex)
        if committed is None:
            return None
        return AdapterOutput(
            data={"status_url": ex.url, "status_code": ex.status, "committed": committed},
            committed=committed,
            summary=f"status endpoint says the write {'took' if committed else 'did not take'} "
            "effect",
            evidence=(
                Evidence(
                    source_id=f"http:{ctx.call_id}:reconcile",
                    kind="reconcile",
                    value="committed" if committed else "not_committed",
                    call_id=ctx.call_id,
                    verified=True,
                    observed_at=time.time(),
                ),
            ),
        )

    # ------------------------------------------------------------------ exchange

    def _deadline(self, timeout_s: float | None, ctx: InvokeContext) -> float:
        deadline = time.time() + (timeout_s or self._default_timeout_s)
        return deadline if ctx.deadline is None else min(deadline, ctx.deadline)

    def _exchange(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        content: bytes | None,
        cancel: threading.Event,
        deadline: float,
        write: bool,
    ) -> Exchange:
        """Send, following redirects by hand; every hop is guarded before it is contacted."""
        redirects: list[str] = []
        origin: tuple[str, str, int] | None = None
        watchdog = Watchdog(cancel, deadline)
        resolver = bounded_resolver(self._resolver, deadline, cancel)
        try:
            for _ in range(self._max_redirects + 1):
                target = guard_url(
                    url, self._patterns, allow_private=self._allow_private, resolver=resolver
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
        raise PermanentError(f"more than {self._max_redirects} redirects; gave up")

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
        client = self._http()
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
            decoder = BoundedDecoder(response.headers.get("content-encoding"), self._max_bytes)
            for raw in response.iter_raw():
                if watchdog.reason is not None or time.time() >= deadline:
                    interrupted = watchdog.reason or "deadline"
                    break
                chunk = decoder.feed(raw)
                room = self._max_bytes - len(kept)
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
    except ValueError:
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


def _idempotency_key(ctx: InvokeContext) -> str:
    return ctx.idempotency_key or f"{ctx.run_id}:{ctx.call_id}"
