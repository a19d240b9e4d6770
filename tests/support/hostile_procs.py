"""Hostile child programs for the process adapter, and ways to watch what they leave behind.

``ESCAPE`` starts a grandchild that leaves the call's process group (``setpgid``), its
session (``setsid``) or its parentage (a double fork), ignores SIGTERM, lets go of the
call's pipes like a daemon and writes its pid to a file; the leader prints ``READY`` once
the grandchild is in place, then hangs or exits 0. ``DRIP`` writes its output one byte at a
time, flushing each.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

ESCAPE = r"""
import os, signal, sys, time
mode, after, pidfile = sys.argv[1:4]
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    if mode == "setpgid":
        os.setpgid(0, 0)
    else:
        os.setsid()
    if mode == "double_fork" and os.fork() != 0:
        os._exit(0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    with open(pidfile, "a") as fh:
        fh.write(f"{os.getpid()}\n")
    os.write(w, b"x")
    os.close(w)
    time.sleep(120)
    os._exit(0)
os.close(w)
os.read(r, 1)
if mode == "double_fork":
    os.waitpid(pid, 0)
print("READY", flush=True)
if after == "hang":
    time.sleep(120)
"""

ESCAPES = ["setpgid", "setsid", "double_fork"]

DRIP = r"""
import sys
n = int(sys.argv[1])
for i in range(n):
    stream = sys.stdout if i % 2 == 0 else sys.stderr
    stream.write("x")
    stream.flush()
"""


class OutputEvents:
    """Collects tool.output payloads; sets ``cancel`` once a stdout line equals ``ready``."""

    def __init__(self, cancel: threading.Event | None = None, ready: str = "READY") -> None:
        self.events: list[dict[str, Any]] = []
        self._cancel = cancel
        self._ready = ready
        self._stdout = ""

    def __call__(self, kind: str, payload: dict[str, Any]) -> None:
        assert kind == "tool.output"
        self.events.append(payload)
        if payload["stream"] == "stdout":
            self._stdout += payload["chunk"]
            if self._cancel is not None and self._ready in self._stdout.splitlines():
                self._cancel.set()

    def text(self, stream: str) -> str:
        return "".join(e["chunk"] for e in self.events if e["stream"] == stream)


def gone(pid: int) -> bool:
    """Dead or a zombie (reaping orphans is init's job, not the adapter's)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def all_gone(pids: list[int], within_s: float = 5.0) -> bool:
    """SIGKILL delivery is asynchronous: look again for a bounded time."""
    give_up = time.monotonic() + within_s
    while True:
        if all(gone(pid) for pid in pids):
            return True
        if time.monotonic() > give_up:
            return False
        time.sleep(0.02)


def pids_in(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: none), asked directly, not through execgraph."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    version = libc.syscall(444, None, 0, 1)  # landlock_create_ruleset(..., VERSION)
    return max(0, int(version))
