"""The HTTP adapter: ``http_get`` (read) and ``http_post`` / ``http_put`` / ``http_delete``.

Security: every request and every redirect hop is checked before it is sent —
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

Evidence: a read's status and body hash are verified (the runtime saw and hashed them); a
write's are not — its answer is the server's word about itself. A write is verified only
by a read-back: with a status endpoint declared for its URL, the endpoint is asked after a
2xx whether the write with this key took effect (``read_back`` evidence, verified; a "no"
is a ``VerificationError``).

Errors raised after a response arrived carry the observation (status, bounded body,
evidence); read it with :func:`output_of`.
Writes send ``Idempotency-Key: ctx.idempotency_key`` and, for a call with an execution
record, ``X-Execgraph-Fence: ctx.fence`` on every attempt and hop, after checking the fence
(:meth:`InvokeContext.check_fence`): a server that keeps the highest fence it saw per key
can refuse a stale owner's request even if it was sent between the check and the send.

Time: the call's deadline is a *total* for the whole exchange (every hop, header and body
byte): a watchdog (:mod:`._httpwatchdog`) shuts the connection down when it passes or when
the call is cancelled, so a server dripping its headers cannot hold a pool thread. Size:
``max_response_bytes`` caps *decoded* bytes while streaming (:mod:`._httpdecode`); an encoded
body past it is refused, never decoded whole.

The name lookup is bounded by the same deadline (:mod:`._bounded_lookup`).

Here: the adapter (its tools, the write's idempotency key, reconcile). The tools' arguments
are in :mod:`._httpargs`, sending a request through its hops in :mod:`._httpexchange`, the
outcome mapping above in :mod:`._httpresult`.

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
from typing import Literal
from urllib.parse import quote, urljoin

import httpx
from pydantic import BaseModel

from execgraph.state.contracts import Evidence
from execgraph.state.errors import ExecGraphError, ToolDeclarationError, VerificationError
from execgraph.tools.adapters._httpargs import HttpGetArgs, HttpWriteArgs
from execgraph.tools.adapters._httpexchange import Exchanger
from execgraph.tools.adapters._httpresult import build_outcome, committed_from_status
from execgraph.tools.adapters.netguard import Resolver, parse_host_patterns
from execgraph.tools.invocation import AdapterOutput, InvokeContext, output_of
from execgraph.tools.spec import Runner, ToolSpec

__all__ = ["HttpAdapter", "HttpGetArgs", "HttpWriteArgs", "output_of"]


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
        self._default_timeout_s = default_timeout_s
        self._version = version
        self._exchanger = Exchanger(
            patterns=self._patterns,
            allow_private=allow_private,
            max_bytes=max_response_bytes,
            max_redirects=max_redirects,
            resolver=resolver,
            client=self._http,
        )

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
                verify=self._read_back,
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
        ex = self._exchanger.exchange(
            "GET", args.url, dict(args.headers), None, ctx.cancel, deadline, False
        )
        return build_outcome(ex, ctx, write=False)

    def _writer(self, method: Literal["POST", "PUT", "DELETE"]) -> Runner:
        def run(args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
            assert isinstance(args, HttpWriteArgs)
            # The fence lets the server refuse a stale owner (a lower fence than it saw
            # for this key); the check before each send refuses it here first.
            fence = ctx.fence_headers()
            headers = {**args.headers, **fence, "Idempotency-Key": _idempotency_key(ctx)}
            content: bytes | None = None
            if args.json_body is not None:
                content = json.dumps(args.json_body).encode()
                headers.setdefault("Content-Type", "application/json")
            elif args.body is not None:
                content = args.body.encode()
            deadline = self._deadline(args.timeout_s, ctx)
            ex = self._exchanger.exchange(
                method,
                args.url,
                headers,
                content,
                ctx.cancel,
                deadline,
                True,
                before_send=ctx.check_fence,
            )
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
            ex = self._exchanger.exchange(
                "GET", status_url, {}, None, threading.Event(), deadline, False
            )
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

    def _read_back(
        self, args: BaseModel, output: AdapterOutput, ctx: InvokeContext
    ) -> list[Evidence]:
        """Read-after-write: a write's own answer (status, body, request id) is the
        server's word, so it is verified only by reading back — the declared status
        endpoint asked whether the write with this key took effect. Without one the
        write's evidence stays unverified.

        Raises:
            VerificationError: the status endpoint says the write did not take effect.
        """
        if not output.committed:
            return []
        probe = self._reconcile(args, ctx)
        if probe is None:
            return []
        if not probe.committed:
            raise VerificationError("the status endpoint says the write did not take effect")
        said = probe.data.get("status_url") if isinstance(probe.data, dict) else None
        return [
            Evidence(
                source_id=f"http:{ctx.call_id}:read_back",
                kind="read_back",
                value=str(said or "committed"),
                call_id=ctx.call_id,
                verified=True,
                observed_at=time.time(),
            )
        ]

    def _deadline(self, timeout_s: float | None, ctx: InvokeContext) -> float:
        deadline = time.time() + (timeout_s or self._default_timeout_s)
        return deadline if ctx.deadline is None else min(deadline, ctx.deadline)


def _idempotency_key(ctx: InvokeContext) -> str:
    return ctx.idempotency_key or f"{ctx.run_id}:{ctx.call_id}"
