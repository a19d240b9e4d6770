"""Module-level tools for the process-isolation tests (a child process imports them by name)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from execgraph.state.errors import TargetNotFound
from execgraph.tools import tool_spec


@tool_spec(effect="read", isolation="process")
def add(a: int, b: int) -> dict[str, int]:
    """Add two numbers in a child process."""
    print("this goes to stderr, not into the answer")
    return {"sum": a + b, "pid": os.getpid()}


@tool_spec(effect="write", isolation="process", locks=["file:{pidfile}"], timeout_s=6)
def hang(pidfile: str) -> str:
    """Write this process's pid, then ignore SIGTERM and never return."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    Path(pidfile).write_text(str(os.getpid()))
    while True:
        time.sleep(0.05)


@tool_spec(effect="read", isolation="process", timeout_s=60)
def wait_forever(pidfile: str) -> str:
    """Write this process's pid, then wait until killed."""
    Path(pidfile).write_text(str(os.getpid()))
    time.sleep(120)
    return "never"


@tool_spec(effect="read", isolation="process")
def missing(name: str) -> str:
    """Raise a typed error from the child."""
    raise TargetNotFound(f"no document named {name}")


@tool_spec(effect="read", isolation="process")
def broken() -> str:
    """Raise a foreign error with a secret in it."""
    raise RuntimeError("password=hunter2")


@tool_spec(effect="read", isolation="process")
async def slow_timeout() -> str:
    """An async tool whose own timeout fires."""
    import asyncio

    await asyncio.wait_for(asyncio.sleep(5), timeout=0.01)
    return "never"
