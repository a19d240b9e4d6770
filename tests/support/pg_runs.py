"""Run graphs on shared state, in this process or in others, for the PostgreSQL and
run-lease tests.

:func:`build_app` compiles a real ``react`` run graph whose model pays once and then
finishes (each reply decided by what the run has seen, so any process resuming the run
answers alike) and whose tool ``pay`` is irreversible (so it pauses for approval) and
counted by the world itself: each effect appends a line to the trial's ledger file.
``where`` is a ``postgresql://`` DSN (``database=``) or a directory (the embedded
default's ``home``), so the same helpers run on both backends.

As a process (``python -m tests.support.pg_runs WHERE BASE THREAD OP [AT]``) it builds the
same graph and runs one operation, printing one JSON line:

* ``start`` — invoke the task until it pauses (``{"paused": true}``);
* ``approve`` — wait for wall time ``AT`` (the barrier racing processes are given), then
  ``invoke(Command(resume="approve"))``: ``{"status": ...}``, or ``{"error": class,
  "message": ...}`` for an execgraph error;
* ``open`` — wait for ``AT``, build the graph (its migrations) and run a whole trial.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.types import Command

from execgraph.graph import build_graph
from execgraph.graph.compiled import RunGraph
from execgraph.nodes.models import ScriptedChatModel
from execgraph.state.errors import ExecGraphError
from execgraph.tools import tool_spec

__all__ = ["build_app", "cfg", "effects", "run_op", "spawn"]

_ROOT = Path(__file__).resolve().parents[2]


def _decide(messages: list[BaseMessage]) -> AIMessage:
    """Pay once; once a tool answered, finish."""
    if any(m.type == "tool" for m in messages):
        return AIMessage(content="", tool_calls=[_call("finish", {"output": "paid"})])
    return AIMessage(content="", tool_calls=[_call("pay", {"line": "paid"})])


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"{name}-0"}


def cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def build_app(where: str, base: Path, thread: str, *, gate: Path | None = None) -> RunGraph:
    """The run graph on ``where`` (a DSN or a home directory); ``pay`` appends to
    ``base/ledger-<thread>``. With ``gate``, ``pay`` waits (bounded) until that file exists."""
    ledger = base / f"ledger-{thread}"

    @tool_spec(effect="irreversible", retry=None)
    def pay(line: str) -> str:
        """Pay once (the ledger line is the payment; running twice pays twice)."""
        deadline = time.monotonic() + 60.0
        while gate is not None and not gate.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        with open(ledger, "a") as fh:
            fh.write(f"{line} {os.getpid()}\n")
        return "paid"

    kwargs: dict[str, Any] = (
        {"database": where, "home": base / "home"}
        if where.startswith("postgresql://")
        else {"home": Path(where)}
    )
    return build_graph(
        "react",
        model=ScriptedChatModel([_decide] * 8),
        tools=[pay],
        workspace=base / "ws",
        **kwargs,
    )


def effects(base: Path, thread: str) -> int:
    """How many payments the tool itself made for run ``thread``."""
    ledger = base / f"ledger-{thread}"
    return len(ledger.read_text().splitlines()) if ledger.exists() else 0


def _wait_until(at: float) -> None:
    while (left := at - time.time()) > 0:
        time.sleep(min(left, 0.05))


def run_op(where: str, base: Path, thread: str, op: str, at: float = 0.0) -> dict[str, Any]:
    """One operation (see the module docstring), as its JSON answer."""
    if op == "open":
        _wait_until(at)
    app = build_app(where, base, thread)
    try:
        if op == "start":
            out = app.invoke({"task": {"goal": "pay once"}}, cfg(thread))
            return {"paused": bool(out.get("__interrupt__"))}
        if op == "open":
            app.invoke({"task": {"goal": "pay once"}}, cfg(thread))
            out = app.invoke(Command(resume="approve"), cfg(thread))
            return {"status": out["status"]}
        _wait_until(at)
        out = app.invoke(Command(resume="approve"), cfg(thread))
        return {"status": out["status"], "paused": bool(out.get("__interrupt__"))}
    except ExecGraphError as exc:
        return {"error": type(exc).__name__, "message": str(exc)}


def spawn(where: str, base: Path, thread: str, op: str, at: float = 0.0) -> subprocess.Popen[str]:
    """``run_op`` in a new process (read its answer with :func:`answer`)."""
    env = {**os.environ, "PYTHONPATH": str(_ROOT)}
    argv = [sys.executable, "-m", "tests.support.pg_runs", where, str(base), thread, op, str(at)]
    return subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def answer(proc: subprocess.Popen[str], timeout_s: float = 180.0) -> dict[str, Any]:
    """The JSON answer of a process :func:`spawn` started (its stderr when it failed)."""
    out, err = proc.communicate(timeout=timeout_s)
    if proc.returncode != 0 or not out.strip():
        raise AssertionError(f"worker exited {proc.returncode}:\n{err[-4000:]}")
    reply: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return reply


if __name__ == "__main__":
    where_, base_, thread_, op_, at_ = sys.argv[1:6]
    print(json.dumps(run_op(where_, Path(base_), thread_, op_, float(at_))), flush=True)
