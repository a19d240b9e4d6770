"""Worker processes that race on one execution store, for the concurrency tests.

A worker is a long-lived Python process (``python -m tests.support.workers``) with its own
executor app on a shared execution store (SQLite file or PostgreSQL) and a shared
checkpointer (SQLite file, or the same PostgreSQL database). It takes one JSON command
per line on stdin and answers one JSON line on stdout, so a test reuses two processes
for hundreds of trials, each on its own thread id, instead of starting Python per trial.

The tool ``pay`` is irreversible (``record_payment`` is the same as a plain write) and
counted by the world itself: each run appends one line to the trial's ledger (the effect)
and, when it starts, one line to the trial's ``invocations`` file. It holds until the test
creates the trial's ``release`` file, so a second worker racing for the same call really
finds it in flight; its reconcile probe honestly answers from the ledger. A worker that
waits for another one's call (the executor's ``await_owner``) touches the trial's
``waiting`` file, which tells the test the race was met without a sleep.

Commands (``trial`` names the thread, run and files):

* ``{"op": "pause", "trial": n, "tool": t}`` — start the call; it pauses for approval
  (``pay``, or ``pay_unprobed``: the same without a reconcile probe).
* ``{"op": "run", "trial": n}`` — start the same payment as a plain write (never asked).
* ``{"op": "resume", "trial": n, "value": v, "at": t}`` — wait until wall time ``t`` (the
  barrier both workers are given), then ``invoke(Command(resume=v))``; ``"value": null``
  with ``"input": "none"`` is ``invoke(None, cfg)``.
* ``{"op": "quit"}``.
"""

from __future__ import annotations

import json
import os
import select
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["Worker", "release_when", "start_pair"]

_HOLD_S = 30.0  # the tool never holds longer than this, whatever the test does


# -- the parent side --------------------------------------------------------------------


class Worker:
    """One worker process, driven over its stdin and stdout."""

    def __init__(self, store: str, base: Path, name: str, checkpoints: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
        self.name = name
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.workers", store, str(base), checkpoints],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(base / f"{name}.log", "w"),  # noqa: SIM115 - the child keeps it
            text=True,
            env=env,
        )
        self.base = base
        assert self.recv(120.0) == {"ready": True}

    def send(self, **command: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()

    def recv(self, timeout_s: float = 120.0) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout_s)
        if not ready:
            raise AssertionError(f"worker {self.name} did not answer within {timeout_s}s")
        line = self.proc.stdout.readline()
        if not line:
            log = (self.base / f"{self.name}.log").read_text()
            raise AssertionError(f"worker {self.name} died:\n{log[-4000:]}")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def close(self) -> None:
        if self.proc.poll() is None:
            self.send(op="quit")
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_pair(store: str, base: Path, checkpoints: str) -> tuple[Worker, Worker]:
    """Two workers on one store and one checkpointer."""
    base.mkdir(parents=True, exist_ok=True)
    return Worker(store, base, "a", checkpoints), Worker(store, base, "b", checkpoints)


def release_when(base: Path, trial: int, *, timeout_s: float = 20.0) -> str:
    """Release the trial's held tool once the race is met: a second invocation started
    (the old duplicate) or a worker waits for the first one's call. Returns which."""
    invocations = base / f"invocations-{trial}"
    waiting = base / f"waiting-{trial}"
    deadline = time.monotonic() + timeout_s
    why = "timeout"
    while time.monotonic() < deadline:
        if waiting.exists():
            why = "waiting"
            break
        if invocations.exists() and len(invocations.read_text().splitlines()) >= 2:
            why = "second invocation"
            break
        time.sleep(0.002)
    (base / f"release-{trial}").touch()
    return why


# -- the worker side --------------------------------------------------------------------


def _app(store_url: str, base: Path, checkpoints: str, policy: Any) -> Any:
    """The executor on the shared store and checkpointer, with ``pay`` (irreversible: the
    policy always asks a person) and ``record_payment`` (a write it lets run)."""
    from execgraph.graph.executor import build_executor
    from execgraph.nodes.executor import ExecutorDeps
    from execgraph.state.store import open_store
    from execgraph.tools import AdapterOutput, InvokeContext, ToolRegistry, tool_spec

    def reconcile(args: Any, ctx: InvokeContext) -> AdapterOutput:
        ledger = base / f"ledger-{args.trial}"
        lines = ledger.read_text().splitlines() if ledger.exists() else []
        return AdapterOutput(committed=args.line in lines)

    def pay_once(trial: int, line: str) -> str:
        with open(base / f"invocations-{trial}", "a") as fh:
            fh.write(f"{os.getpid()}\n")
        release = base / f"release-{trial}"
        deadline = time.monotonic() + _HOLD_S
        while not release.exists() and time.monotonic() < deadline:
            time.sleep(0.001)
        with open(base / f"ledger-{trial}", "a") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        return "paid"

    @tool_spec(effect="irreversible", reconcile=reconcile, retry=None)
    def pay(trial: int, line: str) -> str:
        """Pay once (the ledger line is the payment; running twice pays twice)."""
        return pay_once(trial, line)

    @tool_spec(effect="irreversible", retry=None)
    def pay_unprobed(trial: int, line: str) -> str:
        """Pay once, with no way to check afterwards whether it happened."""
        return pay_once(trial, line)

    @tool_spec(effect="write", reconcile=reconcile, retry=None)
    def record_payment(trial: int, line: str) -> str:
        """Append the payment line (a write no policy asks about; twice writes it twice)."""
        return pay_once(trial, line)

    deps = ExecutorDeps(
        registry=ToolRegistry([pay, pay_unprobed, record_payment]),
        policy=policy,
        store=open_store(store_url),
        approval_secret=b"race-test",
    )
    return build_executor(deps, checkpointer=_saver(checkpoints))


def _saver(checkpoints: str) -> Any:
    if checkpoints.startswith("postgresql://"):
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row

        conn = psycopg.connect(checkpoints, autocommit=True, prepare_threshold=0)
        conn.row_factory = dict_row  # type: ignore[assignment]
        saver = PostgresSaver(conn)  # type: ignore[arg-type]
        try:
            saver.setup()
        except psycopg.Error:  # the other worker created the tables at the same moment
            saver.setup()
        return saver
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn_ = sqlite3.connect(checkpoints, check_same_thread=False, timeout=60)
    conn_.execute("PRAGMA journal_mode = WAL")
    return SqliteSaver(conn_)


def _request(base: Path, trial: int, tool: str) -> dict[str, Any]:
    return {
        "run_id": f"run-{trial}",
        "turn_id": "turn-1",
        "call_id": "call-1",
        "tool": {"name": tool},
        "arguments": {"trial": trial, "line": f"pay 100 for trial {trial}"},
        "workspace": {"id": "ws", "root": str(base)},
    }


def _signal_waits(base: Path) -> None:
    """Touch the trial's ``waiting`` file when this worker waits for another's call."""
    from execgraph.nodes.executor import pipeline

    original = getattr(pipeline, "await_owner", None)
    if original is None:  # the code before leases: nothing ever waits
        return

    def await_owner(*args: Any, **kwargs: Any) -> Any:
        held = args[1] if len(args) > 1 else kwargs["held"]
        trial = held.record.run_id.removeprefix("run-")
        (base / f"waiting-{trial}").touch()
        return original(*args, **kwargs)

    pipeline.await_owner = await_owner


def _outcome(app: Any, out: Any, cfg: dict[str, Any]) -> dict[str, Any]:
    result = ((out or {}).get("results") or {}).get("call-1")
    state = app.get_state(cfg).values.get("results", {}).get("call-1")
    return {
        "ok": True,
        "paused": bool((out or {}).get("__interrupt__")),
        "outcome": None if result is None else result["outcome"],
        "error": None if result is None else (result.get("error") or {}).get("type"),
        "state": None if state is None else state["outcome"],
    }


def _until_checkpointed(app: Any, cfg: dict[str, Any]) -> None:
    """Wait until the thread's first checkpoint is visible here (LangGraph writes it in the
    background while the node runs)."""
    deadline = time.monotonic() + 30
    while not app.get_state(cfg).next and time.monotonic() < deadline:
        time.sleep(0.001)


def main() -> None:
    from langgraph.types import Command

    from execgraph.tools import PolicyEngine

    store_url, base_s, checkpoints = sys.argv[1:4]
    base = Path(base_s)
    app = _app(store_url, base, checkpoints, PolicyEngine())
    _signal_waits(base)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        op = command["op"]
        if op == "quit":
            return
        trial = command.get("trial", 0)
        cfg = {"configurable": {"thread_id": f"thread-{trial}"}}
        try:
            if op in ("pause", "run"):
                tool = command.get("tool") or ("pay" if op == "pause" else "record_payment")
                out = app.invoke({"request": _request(base, trial, tool)}, cfg)
            else:
                while time.time() < command["at"]:  # the barrier: both start this instant
                    pass
                value = None if command.get("input") == "none" else Command(resume=command["value"])
                if value is None:  # the first worker's run: resumable once checkpointed
                    _until_checkpointed(app, cfg)
                out = app.invoke(value, cfg)
            reply = _outcome(app, out, cfg)
        except Exception as exc:  # told, not crashed: the test reads what it was told
            reply = {"ok": False, "raised": type(exc).__name__, "message": str(exc)[:500]}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
