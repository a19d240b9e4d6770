"""A per-request watchdog that cuts the connection at the call's deadline or on cancel.

httpx's timeouts are per phase and per read: a server that sends one header byte per second
satisfies every read timeout forever. The watchdog enforces the *total*: it learns each
socket the request opens through httpcore's ``trace`` extension and, once the deadline
passes or the call is cancelled, shuts the socket down, which wakes the blocked read at once
(the read then fails and the adapter reports why, from :attr:`Watchdog.reason`).

Only connections opened during the request are known to it, so the adapter sends
``Connection: close`` and never reuses a pooled one. A client whose transport is not
httpcore-based never reports its sockets; such a request keeps only the per-read timeout.
"""

from __future__ import annotations

import socket
import threading
import time
from contextlib import suppress
from typing import Any, Literal

__all__ = ["Watchdog"]

_POLL_S = 0.05  # how soon a cancel is noticed
_OPENED = ("connect_tcp.complete", "start_tls.complete")


class Watchdog:
    """Watches one exchange (all its redirect hops); stop it when the exchange is over."""

    def __init__(self, cancel: threading.Event, deadline: float) -> None:
        self.reason: Literal["cancelled", "deadline"] | None = None
        self._cancel = cancel
        self._deadline = deadline
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="execgraph-http-watchdog")
        self._thread.daemon = True
        self._thread.start()

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore ``trace`` callback: remember every socket the request opens."""
        if not event.endswith(_OPENED):
            return
        stream = info.get("return_value")
        sock = getattr(stream, "get_extra_info", lambda _: None)("socket")
        if not isinstance(sock, socket.socket):
            return
        with self._lock:
            self._sockets.append(sock)
            fired = self.reason is not None
        if fired:
            _cut(sock)

    def stop(self) -> None:
        """End the watch (the exchange finished or failed on its own)."""
        self._done.set()
        self._thread.join()

    def _watch(self) -> None:
        while True:
            if self._cancel.is_set():
                reason: Literal["cancelled", "deadline"] = "cancelled"
            elif time.time() >= self._deadline:
                reason = "deadline"
            else:
                left = self._deadline - time.time()
                if self._done.wait(max(0.0, min(left, _POLL_S))):
                    return
                continue
            with self._lock:
                if self._done.is_set():
                    return
                self.reason = reason
                sockets = list(self._sockets)
            for sock in sockets:
                _cut(sock)
            return


def _cut(sock: socket.socket) -> None:
    # shutdown, not close: it wakes a recv blocked in another thread and leaves the file
    # descriptor to its owner, so no other connection can inherit a closed number. The base
    # class's method: ssl.SSLSocket.shutdown would also drop the TLS state under the reader.
    with suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
