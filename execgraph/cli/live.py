"""What a running tool does, shown while it runs: one dim ``call_id │ line`` per line.

Tools stream through LangGraph's stream writer (``stream_mode="custom"``). The process
adapter sends its pipes as ``{"call_id", "kind": "tool.output", "stream", "chunk"}``
pieces cut wherever a read ended, so lines are reassembled per call and stream: a line
split across two reads prints once. Output is untrusted text: it is printed as plain
``Text`` (never rich markup), terminal escape sequences are dropped, other control and
format characters shown escaped (:func:`~execgraph.cli.inert.inert`), and a line is cut
at :data:`MAX_LINE` characters.

The executor also says which call is running and for how long (``"kind":
"tool.running"`` with ``tool`` and ``elapsed_s``, every second): a call is shown when it
starts, and again at 2, 4, 8 … seconds (then every minute) while it still runs, so a long
tool never looks like a hung run. Logged events (chunks with an ``event_id``) are left to
the node lines and ``execgraph trace``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from rich.console import Console
from rich.text import Text

from execgraph.cli.inert import inert, short

__all__ = ["MAX_LINE", "RUNNING", "LiveOutput", "printable"]

MAX_LINE = 200
"""Characters of one output line shown (the rest is in the run's events and evidence)."""

_MAX_PENDING = 4096  # an unterminated line this long (a progress bar) is shown anyway
RUNNING = "tool.running"
"""The kind of the executor's chunk that a call is still running."""
_FIRST_REPORT_S = 2.0  # then twice as long each time, at most a minute apart
_REPORT_EVERY_S = 60.0
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")


def printable(line: str) -> str:
    """One line of tool output as a terminal should show it, at most :data:`MAX_LINE` long.

    A carriage return redraws the line, so only its last non-empty segment is kept.
    """
    line = _ESCAPES.sub("", line.rstrip("\r"))
    if "\r" in line:
        line = next((part for part in reversed(line.split("\r")) if part), "")
    line = inert(line, lines=True)
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"


class LiveOutput:
    """Prints streamed tool output line by line, keeping each unfinished line for later."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._pending: dict[tuple[str, str], str] = {}
        self._next_report: dict[str, float] = {}

    def add(self, chunk: Any) -> None:
        """Show what one custom stream chunk completes (a non-output chunk on one line)."""
        if not isinstance(chunk, Mapping) or chunk.get("event_id"):
            return
        call_id = str(chunk.get("call_id") or "")
        if chunk.get("kind") == RUNNING:
            self._running(call_id, chunk)
            return
        text = chunk.get("chunk")
        if not isinstance(text, str):
            self._other(call_id, chunk)
            return
        stream = str(chunk.get("stream") or "")
        key = (call_id, stream)
        *lines, rest = (self._pending.pop(key, "") + text).split("\n")
        for line in lines:
            self._print(call_id, stream, printable(line))
        if chunk.get("truncated") or len(rest) > _MAX_PENDING:
            if rest:
                self._print(call_id, stream, printable(rest))
            if chunk.get("truncated"):
                self._print(call_id, stream, "… (output budget reached; not shown)")
        elif rest:
            self._pending[key] = rest

    def finish(self, call_ids: Iterable[str] | None = None) -> None:
        """Show the unfinished last lines of these calls (all calls when None): they ended."""
        wanted = None if call_ids is None else set(call_ids)
        for call_id in [c for c in self._next_report if wanted is None or c in wanted]:
            del self._next_report[call_id]
        for key in [k for k in self._pending if wanted is None or k[0] in wanted]:
            self._print(key[0], key[1], printable(self._pending.pop(key)))

    def _running(self, call_id: str, chunk: Mapping[str, Any]) -> None:
        tool = printable(str(chunk.get("tool") or "a tool"))
        elapsed = float(chunk.get("elapsed_s") or 0.0)
        due = self._next_report.get(call_id)
        if due is None:
            self._print(call_id, "", f"running {tool} …")
            due = _FIRST_REPORT_S
        if elapsed >= due:
            self._print(call_id, "", f"{tool} still running ({elapsed:.0f} s)")
            while due <= elapsed:
                due = min(due * 2, due + _REPORT_EVERY_S)
        self._next_report[call_id] = due

    def _other(self, call_id: str, chunk: Mapping[str, Any]) -> None:
        message = chunk.get("message")
        if not isinstance(message, str):
            body = {k: v for k, v in chunk.items() if k not in ("call_id", "kind")}
            message = short(body, 100)
        kind = str(chunk.get("kind") or "")
        self._print(call_id, "", (f"{kind}: " if kind else "") + printable(message))

    def _print(self, call_id: str, stream: str, line: str) -> None:
        label = f"{call_id} {stream}" if stream and stream != "stdout" else call_id
        text = Text(f"  {'':<12} {label} │ ", style="dim")
        text.append(line, style="dim")
        self._console.print(text, soft_wrap=True)
