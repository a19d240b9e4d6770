"""Hostile filesystem fixtures: a directory/symlink swapper racing the file tools, FIFOs.

The swapper is a real thread renaming real directory entries as fast as it can, so a tool
that checks a path and then opens it by name meets the other side of the swap.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["Swapper", "bounded_call", "release_fifo", "swapping"]

_LIBC = ctypes.CDLL(None, use_errno=True)
_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


class Swapper(threading.Thread):
    """Flips ``ws/<name>`` between a real directory and a symlink to ``outside``.

    Each flip is one atomic ``renameat2(RENAME_EXCHANGE)`` of the entry with a parked
    link, so the entry always exists (a tool creating missing parents cannot jam it) and
    is, at any instant, either the directory or the link.
    """

    def __init__(self, ws: Path, name: str, outside: Path) -> None:
        super().__init__(daemon=True, name=f"swap-{name}")
        self.entry, self.parked = os.fsencode(ws / name), os.fsencode(ws / f".{name}.swap")
        os.symlink(outside, ws / f".{name}.swap")
        self.stop_event, self.swapped = threading.Event(), threading.Event()
        self.cycles = 0

    def _exchange(self) -> None:
        if _LIBC.renameat2(_AT_FDCWD, self.entry, _AT_FDCWD, self.parked, _RENAME_EXCHANGE):
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))

    def run(self) -> None:
        while not self.stop_event.is_set():
            self._exchange()  # the link is in place
            self._exchange()  # the directory is back
            self.cycles += 1
            self.swapped.set()

    def stop(self) -> None:
        self.stop_event.set()
        self.join(timeout=30)
        assert not self.is_alive(), "the swapper did not stop"


@contextlib.contextmanager
def swapping(ws: Path, name: str, outside: Path) -> Iterator[Swapper]:
    """Run a :class:`Swapper` for the duration of the block (started once it has swapped)."""
    swapper = Swapper(ws, name, outside)
    swapper.start()
    assert swapper.swapped.wait(timeout=30), "the swapper never swapped"
    try:
        yield swapper
    finally:
        swapper.stop()


def bounded_call(fn: Callable[[], Any], timeout_s: float) -> tuple[bool, Any]:
    """Run ``fn`` on a daemon thread; (finished in time, its result or raised exception).

    A regression that blocks forever then fails the test instead of hanging the suite.
    """
    box: list[Any] = []

    def target() -> None:
        try:
            box.append(fn())
        except BaseException as exc:  # the test inspects what was raised
            box.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(timeout_s)
    return (not worker.is_alive(), box[0] if box else None)


def release_fifo(fifo: Path) -> None:
    """Unblock a reader stuck opening ``fifo`` (open it for writing, then close: EOF)."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
