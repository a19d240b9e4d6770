"""A bug in a tool reaches the developer: ``invoke`` raises it, as ``create_agent`` does.

A tool that raises an exception nobody declared for the model (not a ``ToolException``,
a :class:`~execgraph.state.errors.ModelRetry` or another typed error) has a bug. The
model is told only a fixed, typed message (:class:`~execgraph.state.errors.ToolRaised`),
so by default (``build_graph(..., tool_errors="raise")``) the run stops at once, FAILED
and recorded, and the ``invoke``/``stream`` that ran it raises the exception, its
traceback intact. Its text never enters state or the model's input, so the exception
object itself is kept here, in this process, from the moment the tool raised until the
entry point that ran the run takes it (:func:`take_due`).

When the original exception is not at hand (the tool ran in a child process, or in
another worker), :class:`ToolBug` is raised instead: the tool, the exception's type and
the call, with the traceback in that process's log and the call's ``tool.raised`` event.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextlib import suppress
from typing import Literal, get_args

from execgraph.state.errors.base import ExecGraphError, Phase

__all__ = [
    "TOOL_ERRORS",
    "WITHHELD_PREFIX",
    "ToolBug",
    "ToolErrors",
    "bug_reason",
    "is_tool_bug",
    "mark_due",
    "raised_type",
    "remember",
    "take_due",
]

ToolErrors = Literal["raise", "model"]
"""Where a tool's bug goes: raised to the developer (the default), or told to the model."""
TOOL_ERRORS: tuple[str, ...] = get_args(ToolErrors)

WITHHELD_PREFIX = "the tool failed with "
"""How a :class:`~execgraph.state.errors.ToolRaised` message begins (then the type)."""
_KEPT = 64  # exceptions kept at most (each holds its traceback's frames)
_lock = threading.Lock()
_raised: OrderedDict[tuple[str, str], BaseException] = OrderedDict()
_due: dict[str, tuple[str, str, str]] = {}


class ToolBug(ExecGraphError):
    """A tool raised an exception nobody declared: a bug in the tool, for the developer.

    Raised from ``invoke``/``stream`` when the tool's own exception is not in this process.
    """

    phase = Phase.EXECUTE


def bug_reason(tool: str, error_type: str, call_id: str) -> str:
    """The run's failure reason for a tool bug (its ``error["message"]``)."""
    return (
        f"tool bug: {tool} raised {error_type} in call {call_id}; its traceback is in the "
        "execgraph log and the call's tool.raised event"
    )


def raised_type(message: str) -> str:
    """The exception type a ``ToolRaised`` message names (``"KeyError"``)."""
    named = message.removeprefix(WITHHELD_PREFIX).split(";")[0].strip()
    return named or "an exception"


def remember(run_id: str, call_id: str, exc: BaseException) -> None:
    """Keep the exception ``call_id``'s tool raised, for the entry point to raise."""
    with _lock:
        _raised[(run_id, call_id)] = exc
        _raised.move_to_end((run_id, call_id))
        while len(_raised) > _KEPT:
            _raised.popitem(last=False)


def mark_due(run_id: str, call_id: str, tool: str, error_type: str) -> None:
    """The run stopped for this bug: the entry point running it raises it when it ends."""
    with _lock:
        _due[run_id] = (call_id, tool, error_type)


def take_due(run_id: str) -> BaseException | None:
    """The exception the run's entry point raises now (None: no bug stopped the run);
    forgets every exception kept for the run."""
    with _lock:
        due = _due.pop(run_id, None)
        kept = {c: _raised.pop((r, c)) for r, c in list(_raised) if r == run_id}
    if due is None:
        return None
    call_id, tool, error_type = due
    exc = kept.get(call_id)
    if exc is None:
        return ToolBug(bug_reason(tool, error_type, call_id))
    exc.add_note(f"raised by the tool {tool} in call {call_id} of run {run_id}")
    with suppress(AttributeError):  # an exception class with __slots__ stays unmarked
        exc._execgraph_tool_bug = True  # type: ignore[attr-defined]  # is_tool_bug
    return exc


def is_tool_bug(exc: BaseException) -> bool:
    """Whether ``exc`` is a tool's bug raised after it stopped its run (FAILED, recorded):
    a caller reporting runs (an engine) reports the run instead of failing."""
    return isinstance(exc, ToolBug) or getattr(exc, "_execgraph_tool_bug", False) is True
