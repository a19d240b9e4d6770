"""A tiny JSON service on 127.0.0.1 for the suite's HTTP tasks, with its faults built in.

Shipped code must not import the test helpers, so this is the suite's own: a threaded
``http.server`` on an ephemeral port that records every request it received (the
acceptance checkers read that record, never the runtime's), answers from a route table,
and can misbehave once on demand — answer one path late (a read the client times out
on) or commit one write and then drop the connection before answering (a lost
response, which a status endpoint lets the client reconcile). Built inside
:func:`~execgraph.eval.tasks.flaky.flaky_services`, it also has seeded outages (503, 429,
500, a dropped write, a late read): a request that falls into one is not recorded as
received unless the write was committed.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

from execgraph.eval.tasks import flaky

__all__ = ["Received", "Route", "TaskServer"]

Route = Callable[["Received"], tuple[int, Any]]
"""A handler: the request in, (status code, JSON-able body) out."""


@dataclass(frozen=True)
class Received:
    """One request the server received."""

    method: str
    path: str
    body: Any
    idempotency_key: str


@dataclass
class _Faults:
    slow_once: set[str] = field(default_factory=set)
    drop_once: set[str] = field(default_factory=set)


class TaskServer:
    """Routes ``(method, path) -> Route`` served on ``127.0.0.1`` until :meth:`close`.

    ``GET /status/<idempotency key>`` answers 200 ``{"committed": true}`` when a write with
    that key was received, 404 otherwise: the reconcile probe of a lost response.
    """

    def __init__(self, routes: dict[tuple[str, str], Route], *, slow_s: float = 1.2) -> None:
        self.routes = dict(routes)
        self.received: list[Received] = []
        self.faults = _Faults()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._slow_s = slow_s
        self.flakiness = flaky.current()
        self.outages: list[tuple[str, str, str]] = []  # (kind, method, path), in order
        self._seen: dict[str, int] = {}
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    @property
    def base(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def host(self) -> str:
        """``127.0.0.1:<port>``, as an HTTP adapter's allow-list names it."""
        return f"127.0.0.1:{self._httpd.server_address[1]}"

    def requests(self, method: str | None = None, path: str | None = None) -> list[Received]:
        """The requests received so far (of one method and path, if given)."""
        with self._lock:
            return [
                r
                for r in self.received
                if (method is None or r.method == method) and (path is None or r.path == path)
            ]

    def slow_once(self, path: str) -> None:
        """Answer the next request for ``path`` only after ``slow_s`` (or at close)."""
        self.faults.slow_once.add(path)

    def drop_once(self, path: str) -> None:
        """Commit the next write to ``path``, then close the connection unanswered."""
        self.faults.drop_once.add(path)

    def close(self) -> None:
        """Stop serving (a late answer still pending is released first)."""
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    # ------------------------------------------------------------------ serving

    def _take(self, kind: set[str], path: str) -> bool:
        with self._lock:
            if path in kind:
                kind.discard(path)
                return True
            return False

    def _serve(self, method: str, path: str, raw: bytes, key: str) -> tuple[int, Any] | None:
        """(status, body) to answer, or None to drop the connection unanswered."""
        if method == "GET" and path.startswith("/status/"):
            wanted = unquote(path.removeprefix("/status/"))
            known = any(r.idempotency_key == wanted for r in self.requests())
            return (200, {"committed": True}) if known else (404, {"error": "unknown key"})
        outage = self._outage(method, path, raw)
        if outage in ("unavailable", "rate_limited", "server_error"):
            code = {"unavailable": 503, "rate_limited": 429, "server_error": 500}[outage]
            return code, {"error": outage.replace("_", " ")}
        if outage == "timeout":
            self._stop.wait(self._slow_s)
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = raw.decode("utf-8", "replace")
        received = Received(method, path, body, key)
        with self._lock:
            self.received.append(received)
        if method == "GET" and self._take(self.faults.slow_once, path):
            self._stop.wait(self._slow_s)
        route = self.routes.get((method, path))
        answer = route(received) if route is not None else (404, {"error": f"no {path}"})
        if method != "GET" and self._take(self.faults.drop_once, path):
            return None
        if outage == "partial_write":
            return None
        return answer

    def _outage(self, method: str, path: str, raw: bytes) -> str | None:
        """The seeded outage this request falls into, if the server is flaky."""
        if self.flakiness is None or path.startswith("/status/"):
            return None
        request = f"{method} {path} {hashlib.sha256(raw).hexdigest()[:16]}"
        with self._lock:
            n = self._seen.get(request, 0)
            self._seen[request] = n + 1
        kind = self.flakiness.outage(request, n, write=method != "GET")
        if kind is not None:
            with self._lock:
                self.outages.append((kind, method, path))
        return kind

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                key = self.headers.get("Idempotency-Key") or ""
                answer = server._serve(self.command, self.path, raw, key)
                if answer is None:
                    self.close_connection = True
                    return
                status, body = answer
                data = json.dumps(body).encode()
                self.send_response(status)
                if status in (429, 503):
                    self.send_header("Retry-After", flaky.RETRY_AFTER_S)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    self.wfile.write(data)
                except OSError:  # the client gave up on a late answer: nothing to tell
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_DELETE = _any

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the suite reads ``received``, not a log."""

        return Handler
