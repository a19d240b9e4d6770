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
* ``open`` — wait for ``AT``, build the graph (its migrations) and run a whole trial;
  without ``AT``, touch ``BASE/ready-THREAD`` once imported and take ``AT`` from the file
  ``BASE/go`` (:func:`release` writes it once every process is ready).
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.types import Command

from execgraph.graph import build_graph
from execgraph.state.compiled import RunGraph
from execgraph.state.errors import ExecGraphError
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec

__all__ = [
    "Server",
    "answer",
    "app_op",
    "build_app",
    "cfg",
    "effects",
    "release",
    "run_op",
    "spawn",
    "task",
]

_ROOT = Path(__file__).resolve().parents[2]


def _decide(messages: list[BaseMessage]) -> AIMessage:
    """Pay for the run the task names (``pay for <thread>``); once a tool answered, finish."""
    if any(m.type == "tool" for m in messages):
        return AIMessage(content="", tool_calls=[_call("finish", {"output": "paid"})])
    found = next(
        (m for m in (re.search(r"pay for (\S+)", str(x.content)) for x in messages) if m), None
    )
    return AIMessage(content="", tool_calls=[_call("pay", {"run": found[1] if found else "-"})])


def task(thread: str) -> dict[str, Any]:
    """The task of run ``thread``: pay once for it."""
    return {"task": {"goal": f"pay for {thread}"}}


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"{name}-0"}


def cfg(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def build_app(where: str, base: Path) -> RunGraph:
    """The run graph on ``where`` (a DSN or a home directory); ``pay`` appends a line to
    ``base/ledger-<run>``. When ``base/gate-<run>`` exists, ``pay`` first touches
    ``base/paying-<run>`` and holds (bounded) until the test creates ``base/go-<run>``."""

    @tool_spec(effect="irreversible", retry=None)
    def pay(run: str) -> str:
        """Pay once for a run (the ledger line is the payment; running twice pays twice)."""
        if (base / f"gate-{run}").exists():
            (base / f"paying-{run}").touch()
            deadline = time.monotonic() + 60.0
            while not (base / f"go-{run}").exists() and time.monotonic() < deadline:
                time.sleep(0.002)
        with open(base / f"ledger-{run}", "a") as fh:
            fh.write(f"{os.getpid()}\n")
        return "paid"

    kwargs: dict[str, Any] = (
        {"database": where, "home": base / "home"}
        if where.startswith("postgresql://")
        else {"home": Path(where)}
    )
    return build_graph(
        "react",
        model=ScriptedChatModel([_decide] * 10_000, keep_calls=2),  # one per turn, any run
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


def _agreed_instant(base: Path, thread: str) -> float:
    """Say this process is ready, then wait for the instant :func:`release` agrees on."""
    (base / f"ready-{thread}").touch()
    go = base / "go"
    deadline = time.monotonic() + 300.0
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    return float(go.read_text())


def release(base: Path, threads: list[str], *, timeout_s: float = 300.0) -> None:
    """Once every process :func:`spawn` started for ``threads`` (``open`` without an
    instant) is ready, give them one instant a moment away, so they open together."""
    deadline = time.monotonic() + timeout_s
    while not all((base / f"ready-{t}").exists() for t in threads):
        if time.monotonic() > deadline:
            raise AssertionError(f"not every process was ready within {timeout_s}s")
        time.sleep(0.01)
    aside = base / "go.tmp"
    aside.write_text(repr(time.time() + 0.1))
    aside.replace(base / "go")  # whole, at once


def run_op(where: str, base: Path, thread: str, op: str, at: float = 0.0) -> dict[str, Any]:
    """One operation (see the module docstring), as its JSON answer."""
    if op == "open":
        _wait_until(at or _agreed_instant(base, thread))
    return app_op(build_app(where, base), thread, op, at)


def app_op(app: RunGraph, thread: str, op: str, at: float = 0.0) -> dict[str, Any]:
    """One operation on ``app``, as its JSON answer."""
    try:
        if op == "start":
            out = app.invoke(task(thread), cfg(thread))
            return {"paused": bool(out.get("__interrupt__"))}
        if op == "open":
            app.invoke(task(thread), cfg(thread))
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


class Server:
    """A long-lived process serving :func:`app_op` on one graph, one JSON line per
    command on stdin, so a race of many trials starts Python twice, not twice a trial."""

    def __init__(self, where: str, base: Path, name: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(_ROOT)}
        argv = [sys.executable, "-m", "tests.support.pg_runs", "serve", where, str(base)]
        self.name, self.base = name, base
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(base / f"{name}.log", "w"),  # noqa: SIM115 - the child keeps it
            text=True,
            env=env,
        )
        assert self.recv(180.0) == {"ready": True}

    def send(self, **command: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()

    def recv(self, timeout_s: float = 120.0) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout_s)
        if not ready:
            raise AssertionError(f"{self.name} did not answer within {timeout_s}s")
        line = self.proc.stdout.readline()
        if not line:
            log = (self.base / f"{self.name}.log").read_text()
            raise AssertionError(f"{self.name} died:\n{log[-4000:]}")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _serve(where: str, base: Path) -> None:
    app = build_app(where, base)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        print(json.dumps(app_op(app, cmd["thread"], cmd["op"], cmd.get("at", 0.0))), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        _serve(sys.argv[2], Path(sys.argv[3]))
    else:
        where_, base_, thread_, op_, at_ = sys.argv[1:6]
        print(json.dumps(run_op(where_, Path(base_), thread_, op_, float(at_))), flush=True)
