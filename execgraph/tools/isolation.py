"""``@tool_spec(isolation="process")``: a plain Python tool run in a child process.

A function on a worker thread cannot be stopped: past its deadline or a cancel request it
runs on, and the executor can only hold its locks until it ends. In a child process it can
be stopped: the child runs in its own session (process group), and when the call's cancel
signal is set — at the deadline, or when someone cancels the run — the group gets SIGTERM,
then SIGKILL after a short grace, so the call ends when the executor says it ends.

The child imports the function by its module and name (the decorator registers it there
too), so an isolated tool must be a module-level function; its arguments and return value
cross the process boundary by pickle, its ``print`` output goes to stderr. An exception
comes back as itself when its class can be imported (execgraph's typed errors keep their
meaning, a ``TimeoutError`` stays a timeout), else as ``IsolatedToolError`` named after the
original type; the child's traceback is kept in the exception's notes, for the developer.
Each call starts a Python interpreter (about a second): isolate the tools that need it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import os
import pickle
import signal
import subprocess
import sys
import traceback
from collections.abc import Callable
from typing import Any

from execgraph.state.errors import ToolCancelled, ToolDeclarationError
from execgraph.tools.invocation import InvokeContext

__all__ = ["KILL_GRACE_S", "IsolatedToolError", "register", "run_isolated"]

KILL_GRACE_S = 1.0
"""How long a signalled child has between SIGTERM and SIGKILL."""

_FUNCTIONS: dict[tuple[str, str], Callable[..., Any]] = {}


class IsolatedToolError(Exception):
    """An isolated tool raised an exception whose class the parent cannot rebuild."""


def register(func: Callable[..., Any]) -> tuple[str, str]:
    """Remember ``func`` under its import path, so a child process can find it.

    Raises:
        ToolDeclarationError: ``func`` is not importable by name (a nested function, a
            lambda, a function of ``__main__``).
    """
    where = (func.__module__, func.__qualname__)
    if "<" in func.__qualname__ or func.__module__ == "__main__":
        raise ToolDeclarationError(
            f"isolation='process' needs a module-level function the child can import; "
            f"{func.__module__}.{func.__qualname__} is not one"
        )
    _FUNCTIONS[where] = func
    return where


def run_isolated(where: tuple[str, str], kwargs: dict[str, Any], ctx: InvokeContext) -> Any:
    """Call the function at ``where`` in a child process; stop it when ``ctx.cancel`` is set.

    Raises:
        ToolCancelled: the call was signalled (deadline or cancel) and the child was killed.
        BaseException: whatever the function raised, rebuilt in this process.
    """
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    child = subprocess.Popen(
        [sys.executable, "-m", __name__],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env=env,
    )
    assert child.stdin is not None and child.stdout is not None
    with contextlib.suppress(BrokenPipeError):
        child.stdin.write(pickle.dumps((where, kwargs)))
        child.stdin.close()
    while child.poll() is None:
        if ctx.cancel.wait(0.02):
            _stop(child)
            raise ToolCancelled("the isolated tool was stopped (its process group killed)")
    reply = child.stdout.read()
    child.stdout.close()
    if not reply:
        raise IsolatedToolError(f"the isolated tool's process exited with {child.returncode}")
    ok, value = pickle.loads(reply)
    if ok:
        return value
    raise _rebuilt(*value)


def _stop(child: subprocess.Popen[bytes]) -> None:
    """SIGTERM the child's process group, then SIGKILL it after the grace; reap it."""
    for sig, grace in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, sig)
        try:
            child.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def _rebuilt(module: str, name: str, message: str, trace: str) -> BaseException:
    """The child's exception as an instance of its own class, when that can be built."""
    try:
        cls = getattr(importlib.import_module(module), name)
        exc = cls(message) if isinstance(cls, type) and issubclass(cls, BaseException) else None
    except Exception:
        exc = None
    if not isinstance(exc, BaseException):
        exc = IsolatedToolError(f"{name}: {message}")
    exc.add_note(f"raised in the isolated tool's process:\n{trace}")
    return exc


def _child() -> None:
    """Run one call: read (where, kwargs) on stdin, answer (ok, value) on stdout."""
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr  # the tool's prints must not corrupt the answer
    (module, qualname), kwargs = pickle.loads(sys.stdin.buffer.read())
    try:
        importlib.import_module(module)  # its decorator registers the function ...
        # ... in the importable module, not in this ``__main__`` copy of it
        registry = importlib.import_module("execgraph.tools.isolation")._FUNCTIONS
        value = registry[(module, qualname)](**kwargs)
        if inspect.isawaitable(value):
            value = asyncio.run(_awaited(value))
        answer = pickle.dumps((True, value))
    except BaseException as exc:
        kind = type(exc)
        detail = (kind.__module__, kind.__qualname__, str(exc), traceback.format_exc())
        answer = pickle.dumps((False, detail))
    out.write(answer)
    out.close()


async def _awaited(value: Any) -> Any:
    return await value


if __name__ == "__main__":
    _child()
