"""Hostile HTTP servers on 127.0.0.1 for the adversarial network tests (raw sockets).

``http.server`` writes whole, well-formed responses; an attacker does not. Each server here
answers every connection with one scripted misbehaviour:

* ``drip``: a status line, then one header byte every ``DRIP_S`` seconds, never finishing
  the headers (a per-read timeout never fires; only a total deadline ends it);
* ``bomb``: a tiny body sent with ``Content-Encoding: gzip, gzip`` that decodes to
  ``BOMB_DECODED`` bytes;
* ``bad_redirect``: a 302 whose ``Location`` no URL parser accepts;
* ``idna_redirect``: a 302 whose ``Location`` the standard library parses but whose host
  is no valid IDNA name (only the HTTP client refuses it);
* ``gzip`` / ``deflate-raw`` / ``deflate-zlib`` / ``br``: an honest ``PLAIN`` body in that
  encoding although the client asked for identity (``br`` is not really brotli).

The server records when a client hung up (``client_gone``), so a test can tell that the
adapter really closed the connection instead of abandoning a thread that still reads.
"""

from __future__ import annotations

import gzip
import socket
import threading
import zlib
from collections.abc import Callable
from functools import cache

__all__ = ["BOMB_DECODED", "DRIP_S", "PLAIN", "HostileServer", "gzip_gzip_bomb"]

DRIP_S = 0.2
BOMB_DECODED = 256 * 1024 * 1024  # 256 MiB of zeros once both gzip layers are undone
PLAIN = b"an honest, modestly compressed body\n" * 2000
_GIVE_UP_S = 120.0  # a dripping server stops on its own eventually, whatever the client does


@cache
def gzip_gzip_bomb() -> bytes:
    """gzip(gzip(BOMB_DECODED zero bytes)), built in chunks (never the whole plaintext)."""
    inner = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1024 * 1024)
    parts = [inner.compress(block) for _ in range(BOMB_DECODED // len(block))]
    parts.append(inner.flush())
    return gzip.compress(b"".join(parts), compresslevel=9)


def _raw_deflate(data: bytes) -> bytes:
    z = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return z.compress(data) + z.flush()


class HostileServer:
    """A threaded raw-socket server on 127.0.0.1 that misbehaves in one way (``mode``)."""

    def __init__(self, mode: str) -> None:
        handlers: dict[str, Callable[[socket.socket], None]] = {
            "drip": self._drip,
            "bomb": self._bomb,
            "bad_redirect": self._bad_redirect,
            "idna_redirect": self._idna_redirect,
            "gzip": lambda c: self._encoded(c, "gzip", gzip.compress(PLAIN)),
            "deflate-raw": lambda c: self._encoded(c, "deflate", _raw_deflate(PLAIN)),
            "deflate-zlib": lambda c: self._encoded(c, "deflate", zlib.compress(PLAIN)),
            "br": lambda c: self._encoded(c, "br", b"not really brotli"),
        }
        self._handle = handlers[mode]
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}/x"
        self.requests = 0
        self.dripping = threading.Event()  # the first header byte has been sent
        self.client_gone = threading.Event()  # a client closed its end while we wrote
        self._stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def close(self) -> None:
        self._stop.set()
        self._sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._session, args=(conn,), daemon=True).start()

    def _session(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            self.requests += 1
            try:
                self._handle(conn)
            except OSError:
                self.client_gone.set()

    def _drip(self, conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nX-Drip: ")
        self.dripping.set()
        waited = 0.0
        while not self._stop.wait(DRIP_S) and waited < _GIVE_UP_S:
            waited += DRIP_S
            conn.sendall(b"a")  # raises once the client has closed its end
            try:
                if conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b"":
                    raise ConnectionResetError("client closed")
            except BlockingIOError:
                continue  # nothing to read: the client is still there, waiting

    def _bomb(self, conn: socket.socket) -> None:
        body = gzip_gzip_bomb()
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: gzip, gzip\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        conn.sendall(head.encode() + body)

    def _encoded(self, conn: socket.socket, encoding: str, body: bytes) -> None:
        head = (
            f"HTTP/1.1 200 OK\r\nContent-Encoding: {encoding}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        conn.sendall(head.encode() + body)

    def _idna_redirect(self, conn: socket.socket) -> None:
        conn.sendall(
            b"HTTP/1.1 302 Found\r\nLocation: http://ex\xc3\xa4mple..com/next\r\n"
            b"Content-Length: 0\r\nConnection: close\r\n\r\n"
        )

    def _bad_redirect(self, conn: socket.socket) -> None:
        conn.sendall(
            b"HTTP/1.1 302 Found\r\nLocation: http://[::1/next\r\nContent-Length: 0\r\n"
            b"Connection: close\r\n\r\n"
        )
