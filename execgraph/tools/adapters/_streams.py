"""Bounded, hashed readers for a child's output pipes.

Each pipe is drained by its own thread so a child blocked on a full stderr pipe can never
deadlock one writing stdout. Only the first ``budget`` bytes are kept (and streamed as
events); the rest is counted and hashed, then dropped, so a 50 MB output costs a fixed
amount of memory while its evidence hash still covers every byte.

Events are coalesced: kept text is handed on at most every ``FLUSH_S`` seconds or
``FLUSH_BYTES`` bytes per stream (and at the end), so a child writing one byte at a time
costs a bounded number of events (and event-log rows), not one per ``read``.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import select
import threading
import time
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any, TypeVar

from langgraph.errors import GraphBubbleUp

if TYPE_CHECKING:
    from execgraph.tools.invocation import InvokeContext

__all__ = ["FLUSH_BYTES", "FLUSH_S", "StreamReader", "store_artifact"]

E = TypeVar("E", bound=BaseException)

_CHUNK = 64 * 1024
_SELECT_S = 0.1
#: Longest a read byte waits before it is handed on as an event.
FLUSH_S = 0.1
#: Most text one event carries before it is handed on.
FLUSH_BYTES = 64 * 1024


class StreamReader(threading.Thread):
    """Drain one pipe: keep up to ``budget`` bytes, hash and count everything."""

    def __init__(
        self,
        name: str,
        pipe: IO[bytes],
        budget: int,
        emit: Callable[[dict[str, Any]], None],
    ) -> None:
        super().__init__(name=f"execgraph-{name}-reader", daemon=True)
        self.stream = name
        self.total = 0
        self.truncated = False
        self.abandoned = False
        self.done = threading.Event()
        self._pipe = pipe
        self._budget = max(0, budget)
        self._kept = bytearray()
        self._sha = hashlib.sha256()
        self._emit = emit
        self._emit_ok = True
        self._halt = threading.Event()  # not _stop: that is Thread's own method
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending: list[str] = []
        self._pending_bytes = 0
        self._flush_at: float | None = None

    def stop(self) -> None:
        """Stop reading even without EOF (a holder of the pipe escaped the process group)."""
        self.abandoned = True
        self._halt.set()
        self.done.wait(1.0)

    def run(self) -> None:
        fd = self._pipe.fileno()
        try:
            while not self._halt.is_set():
                wait = _SELECT_S
                if self._flush_at is not None:
                    wait = max(0.0, min(wait, self._flush_at - time.monotonic()))
                ready, _, _ = select.select([fd], [], [], wait)
                if ready:
                    chunk = os.read(fd, _CHUNK)
                    if not chunk:
                        break
                    self._take(chunk)
                if self._flush_at is not None and time.monotonic() >= self._flush_at:
                    self._flush()
        except (OSError, ValueError):
            pass  # the pipe was closed under us: what was read so far stands
        finally:
            self._hold(self._decoder.decode(b"", final=True), 0)
            self._flush()
            self.done.set()

    def _take(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self._sha.update(chunk)
        room = self._budget - len(self._kept)
        if room > 0:
            part = chunk[:room]
            self._kept += part
            self._hold(self._decoder.decode(part), len(part))
        if len(chunk) > room and not self.truncated:
            self.truncated = True
            self._flush()
            self._send({"stream": self.stream, "chunk": "", "truncated": True})

    def _hold(self, text: str, size: int) -> None:
        """Keep ``text`` (``size`` bytes read) for the next event; hand it on once full."""
        if not text:
            return
        self._pending.append(text)
        self._pending_bytes += size
        if self._flush_at is None:
            self._flush_at = time.monotonic() + FLUSH_S
        if self._pending_bytes >= FLUSH_BYTES:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            self._send({"stream": self.stream, "chunk": "".join(self._pending)})
        self._pending.clear()
        self._pending_bytes = 0
        self._flush_at = None

    def _send(self, payload: dict[str, Any]) -> None:
        if not self._emit_ok:
            return
        try:
            self._emit(payload)
        except Exception:
            # A failing event sink must not stop the draining, or the child would block.
            # (This is the reader thread: no LangGraph interrupt can be raised or caught here.)
            self._emit_ok = False

    def kept_bytes(self) -> bytes:
        """The kept prefix (at most ``budget`` bytes)."""
        return bytes(self._kept)

    def kept_len(self) -> int:
        """How many bytes are held in memory."""
        return len(self._kept)

    def text(self) -> str:
        """The kept prefix as text (invalid UTF-8 replaced)."""
        return bytes(self._kept).decode("utf-8", "replace")

    def hexdigest(self) -> str:
        """sha256 of every byte read, kept or not."""
        return self._sha.hexdigest()


def store_artifact(ctx: InvokeContext, data: bytes, kind: str) -> str | None:
    """Store bytes as an artifact when the context has a store; None otherwise."""
    if not data:
        return None
    try:
        return ctx.put_artifact(data, kind)
    except GraphBubbleUp:
        raise  # LangGraph's own signal (an interrupt) must reach LangGraph
    except Exception:  # no store attached, or the store refused: the inline copy remains
        return None
