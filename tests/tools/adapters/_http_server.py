"""A real ThreadingHTTPServer on 127.0.0.1, and call helpers, for the HTTP adapter tests.

Routes: ``/ok``, ``/limited`` (429 + Retry-After seconds), ``/unavailable`` (503 +
Retry-After HTTP-date), ``/redirect?to=``, ``/loop``, ``/stream`` (up to 50 MB, stops when
the client goes), ``/orders`` (POST/PUT/DELETE: commits, then answers, ``?drop`` closes the
connection without answering, ``?slow`` never answers), ``/orders/status?key=``, ``/fail``,
``/moved`` (307 to ``/orders``), ``/orders?see_other`` (commits, then 303).
"""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from execgraph.tools.adapters.http import HttpAdapter, output_of
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.spec import ToolSpec

__all__ = [
    "STREAM_BLOCK",
    "STREAM_BLOCKS",
    "LoopbackOnly",
    "Server",
    "ServerState",
    "_adapter",
    "_call",
    "_ctx",
    "_evidence",
    "_observed",
    "_tool",
]

STREAM_BLOCK = b"y" * 65536
STREAM_BLOCKS = 800  # 50 MB if nobody stops reading


class ServerState:
    """What the server saw, for assertions."""

    def __init__(self) -> None:
        self.hits: list[tuple[str, str]] = []
        self.keys: list[str | None] = []
        self.fences: list[str | None] = []
        self.bodies: list[bytes] = []
        self.orders: dict[str, bytes] = {}
        self.stream_sent = 0
        self.stream_done = threading.Event()
        self.stop = threading.Event()


def _handler(state: ServerState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _reply(self, code: int, body: bytes = b"", headers: dict[str, str] | None = None):
            self.send_response(code)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _route(self) -> tuple[str, dict[str, list[str]]]:
            parts = urlsplit(self.path)
            state.hits.append((self.command, parts.path))
            return parts.path, parse_qs(parts.query)

        def do_GET(self) -> None:
            path, query = self._route()
            if path == "/ok":
                headers = {"Content-Type": "application/json", "X-Request-Id": "req-42"}
                self._reply(200, b'{"hello": "world"}', headers)
            elif path == "/limited":
                self._reply(429, b"slow down", {"Retry-After": "7"})
            elif path == "/unavailable":
                self._reply(503, b"", {"Retry-After": formatdate(time.time() + 3600, usegmt=True)})
            elif path == "/redirect":
                self._reply(302, b"", {"Location": query["to"][0]})
            elif path == "/loop":
                self._reply(302, b"", {"Location": "/loop"})
            elif path == "/stream":
                self._stream()
            elif path == "/orders/status":
                key = query.get("key", [""])[0]
                found = key in state.orders
                self._reply(200 if found else 404, json.dumps({"committed": found}).encode())
            else:
                self._reply(404, b"no such thing")

        def _stream(self) -> None:
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                for _ in range(STREAM_BLOCKS):
                    self.wfile.write(STREAM_BLOCK)
                    state.stream_sent += len(STREAM_BLOCK)
            except OSError:
                pass  # the client stopped reading and closed: exactly what we want
            finally:
                state.stream_done.set()

        def do_POST(self) -> None:
            path, query = self._route()
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            key = self.headers.get("Idempotency-Key")
            state.keys.append(key)
            state.fences.append(self.headers.get("X-Execgraph-Fence"))
            state.bodies.append(body)
            if path == "/fail":
                self._reply(500, b"oops")
                return
            if path == "/moved":
                self._reply(307, b"", {"Location": "/orders"})
                return
            if path != "/orders":
                self._reply(404)
                return
            state.orders[key or ""] = body  # committed before anything is answered
            if "drop" in query:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if "slow" in query:
                state.stop.wait(10)
                return
            if "see_other" in query:
                self._reply(303, b"", {"Location": f"/orders/status?key={key}"})
                return
            headers = {"X-Request-Id": "req-order-1", "Content-Type": "application/json"}
            self._reply(201, b'{"id": "order-1"}', headers)

        do_PUT = do_POST
        do_DELETE = do_POST

    return Handler


class Server:
    """The server on an ephemeral 127.0.0.1 port; with ``tls`` it speaks HTTPS."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.state = ServerState()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.state))
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.scheme = "https" if tls else "http"
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.state.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(10)


class LoopbackOnly(httpx.BaseTransport):
    """A real transport that refuses any destination but 127.0.0.1 (a safety net)."""

    def __init__(self, inner: httpx.HTTPTransport | None = None) -> None:
        self.inner = inner or httpx.HTTPTransport()
        self.seen: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(str(request.url))
        if request.url.host != "127.0.0.1":
            raise httpx.ConnectError("test transport refuses non-loopback", request=request)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def _adapter(transport: LoopbackOnly | None, **kwargs: Any) -> HttpAdapter:
    kwargs.setdefault("allowed_hosts", ["127.0.0.1"])
    kwargs.setdefault("allow_private", True)
    client = httpx.Client(transport=transport, trust_env=False) if transport else None
    return HttpAdapter(client=client, **kwargs)


def _ctx(root: Path, **kwargs: Any) -> InvokeContext:
    kwargs.setdefault("idempotency_key", "key-123")
    return InvokeContext(
        run_id="run-1", call_id="call-1", attempt_id="a1", workspace_root=root, **kwargs
    )


def _tool(adapter: HttpAdapter, name: str) -> ToolSpec:
    return next(t for t in adapter.tools() if t.name == name)


def _call(adapter: HttpAdapter, name: str, ctx: InvokeContext, **args: Any) -> AdapterOutput:
    spec = _tool(adapter, name)
    return spec.run(spec.input_model(**args), ctx)


def _observed(error: BaseException) -> AdapterOutput:
    out = output_of(error)
    assert out is not None
    return out


def _evidence(out: AdapterOutput) -> dict[str, str]:
    return {e.kind: e.value for e in out.evidence}
