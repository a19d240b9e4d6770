"""What a tool needs from the world to work, checked when a run is admitted.

A tool that needs a database, a server or a binary fails at its first call when that is
missing — after the run has spent model calls, maybe after other tools acted. A
:class:`Requirement` declared on the tool (``ToolSpec.requires``) lets admission check it
first and refuse the task with :class:`~execgraph.state.errors.DependencyUnavailable`,
naming each unmet need, before any model or tool call.

A check returns None when the need is met, else a reason in its own words (never a
driver's text, which may carry a DSN or a password). It is bounded by ``timeout_s`` and a
check that raises counts as unmet. Requirements of one key are checked once per admission.
"""

from __future__ import annotations

import shutil
import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["Requirement", "binary", "tcp_port", "unmet"]

DEFAULT_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class Requirement:
    """One thing a tool needs: ``key`` names it (``"database:shop"``, ``"binary:git"``),
    ``what`` says it for people, ``check(timeout_s)`` is None when it is there."""

    key: str
    what: str
    check: Callable[[float], str | None]


def binary(name: str) -> Requirement:
    """An executable ``name`` on ``PATH`` (a browser, ``git``, a driver's CLI)."""

    def check(timeout_s: float) -> str | None:
        return None if shutil.which(name) else f"{name!r} is not installed (not on PATH)"

    return Requirement(f"binary:{name}", f"the program {name!r}", check)


def tcp_port(host: str, port: int, what: str | None = None) -> Requirement:
    """A server accepting TCP connections at ``host:port`` (an MCP or HTTP server)."""

    def check(timeout_s: float) -> str | None:
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                return None
        except OSError:
            return f"nothing answers at {host}:{port}"

    return Requirement(f"tcp:{host}:{port}", what or f"a server at {host}:{port}", check)


def unmet(requirements: Iterable[Requirement], timeout_s: float = DEFAULT_TIMEOUT_S) -> list[str]:
    """``"<what>: <reason>"`` for every requirement not met (each key checked once)."""
    seen: set[str] = set()
    found: list[str] = []
    for req in requirements:
        if req.key in seen:
            continue
        seen.add(req.key)
        started = time.monotonic()
        try:
            reason = req.check(timeout_s)
        except Exception:  # a check that fails is a need not met, never a crash of admission
            reason = "its check failed"
        if reason is None and time.monotonic() - started > timeout_s * 2:
            reason = "its check took too long"
        if reason is not None:
            found.append(f"{req.what}: {reason}")
    return found
