"""One attempt of a torture trial: run (or resume) a workload until it stops, or get killed.

An attempt builds the graph on the trial directory's SQLite checkpointer and SQLite
execution store, then drives the thread to a terminal status: it starts the task when the
thread has no checkpoint, approves any pending approval (``Command(resume=...)``), and
otherwise continues from the last checkpoint (``invoke(None)``). When the thread is done it
writes ``final.json`` (status and results) and exits 0. The harness may SIGKILL it at any
moment; the next attempt is a new process that picks the same thread up.

Every tool with an effect records that effect in the world itself, with the call's
idempotency key, so the harness counts what really happened, not what the runtime says:

* ``ledger`` workload: ``append_ledger`` appends ``<entry> key=<key>`` to ``ledger.txt``
  (non-idempotent; its reconcile probe looks for its key), ``post_transfer`` appends to
  ``transfers.txt`` (non-idempotent, no probe: a crash mid-call must stay ``unknown``).
* ``demo`` workload: ``publish_report`` logs to ``effects.log`` whether the published copy
  was already in place when an execution began (a second execution after it landed is a
  duplicate publication).

Modes: ``attempt`` (one attempt in this process: ``python -m tests.reliability.crash_worker
attempt --dir D --workload ledger``) and ``serve`` (a fork server: it imports everything
once, then for each JSON command on stdin forks a fresh child that runs one attempt,
SIGKILLs it after ``kill_after`` seconds if it is still running, reaps it and answers one
JSON line). Forking a single-threaded, pre-imported parent only saves the seconds of
importing LangGraph per attempt; each attempt is still its own OS process that shares
nothing with the others but the files on disk.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.types import Command

from execgraph.demo.build import DEMO_STAGES, demo_task
from execgraph.demo.corpus import CorpusAdapter
from execgraph.demo.policy import OfflinePolicyModel
from execgraph.demo.research import RESEARCH_CHECKS, publish_tool
from execgraph.graph import build_graph
from execgraph.testing import ScriptedChatModel
from execgraph.tools import AdapterOutput, InvokeContext, ToolSpec, tool_spec
from execgraph.tools.adapters.files import FileAdapter

__all__ = [
    "LEDGER_STEPS",
    "LEDGER_TASK",
    "SECRET",
    "THREAD",
    "WORKLOADS",
    "ledger_model",
    "ledger_tools",
    "run_attempt",
    "serve",
]

THREAD = "torture"
WORKLOADS = ("demo", "ledger")
TERMINAL = ("COMPLETED", "FAILED", "CANCELLED", "BUDGET_EXHAUSTED", "PARTIAL")
SECRET = b"torture-approval-secret"
_MAX_ROUNDS = 40  # invocations per attempt; a run needs a handful
_EFFECT_JITTER_S = 0.03  # widen the window between an effect and its commit

# The ledger script: one list of calls per model turn (a two-call turn runs in parallel).
LEDGER_STEPS: list[list[tuple[str, dict[str, Any]]]] = [
    [("append_ledger", {"entry": "debit-1"})],
    [("post_transfer", {"ref": "tx-1"})],
    [("append_ledger", {"entry": "credit-2"}), ("append_ledger", {"entry": "debit-3"})],
    [("post_transfer", {"ref": "tx-2"})],
    [("append_ledger", {"entry": "credit-4"})],
    [("append_ledger", {"entry": "debit-5"}), ("post_transfer", {"ref": "tx-3"})],
]
LEDGER_TASK: dict[str, Any] = {
    "goal": "Post the day's ledger entries and transfers, then report.",
    "success_checks": [
        {"kind": "tool_succeeded", "target": "append_ledger"},
        {"kind": "output_contains", "value": "ledger posted"},
    ],
    "budgets": {"model_calls": 40, "tool_calls": 40},
}


def _append(path: Path, line: str) -> None:
    """One O_APPEND write, fsynced: a line lands whole or not at all."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _planned_crash(world: Path, point: str) -> None:
    """Die here (once per trial) if the attempt was told to: ``after:<entry>`` or
    ``before:<tool>`` — after an effect / before one, always after its durable record."""
    if os.environ.get("TORTURE_CRASH") == point and not (world / "crashed").exists():
        (world / "crashed").touch()
        os._exit(17)


def _after_effect(world: Path, name: str) -> None:
    """Between the effect and its commit: a little delay, or a planned crash."""
    _planned_crash(world, f"after:{name}")
    time.sleep(random.uniform(0, _EFFECT_JITTER_S))


def _crashable(world: Path, spec: ToolSpec) -> ToolSpec:
    """``spec`` with a planned-crash point between its record and its effect."""
    inner = spec.run

    def run(args: Any, ctx: InvokeContext) -> AdapterOutput:
        _planned_crash(world, f"before:{spec.name}")
        return inner(args, ctx)

    return spec.with_(run=run)


def ledger_tools(world: Path, lock: str = "shared") -> list[ToolSpec]:
    """The two non-idempotent tools of the ledger workload, writing into ``world``.

    ``lock="shared"`` serializes every ledger append on one lock (as a real ledger file
    would); ``"entry"`` gives each entry its own, so no call ever waits on another's.
    """
    ledger, transfers = world / "ledger.txt", world / "transfers.txt"
    ledger_lock = "ledger" if lock == "shared" else "ledger:{entry}"

    def probe(args: Any, ctx: InvokeContext) -> AdapterOutput:
        mine = f" key={ctx.idempotency_key} "
        return AdapterOutput(committed=any(mine in ln for ln in _lines(ledger)))

    @tool_spec(effect="write", locks=[ledger_lock], reconcile=probe)
    def append_ledger(entry: str, ctx: InvokeContext) -> str:
        """Append one entry to the ledger (running it twice books it twice)."""
        _append(ledger, f"{entry} key={ctx.idempotency_key} pid={os.getpid()}")
        _after_effect(world, entry)
        return f"booked {entry}"

    @tool_spec(effect="write", locks=["transfers:{ref}"])
    def post_transfer(ref: str, ctx: InvokeContext) -> str:
        """Send a transfer (no way to ask afterwards whether it went out)."""
        _append(transfers, f"{ref} key={ctx.idempotency_key} pid={os.getpid()}")
        _after_effect(world, ref)
        return f"sent {ref}"

    return [append_ledger, post_transfer]


def _ledger_plan(messages: list[BaseMessage]) -> AIMessage:
    """Plan-and-execute: the whole script as one plan of chained steps, then finish."""
    if any('<tool_output tool="append_ledger"' in str(m.content) for m in messages):
        return _finish()
    steps: list[dict[str, Any]] = []
    for turn, calls in enumerate(LEDGER_STEPS):
        before = [s["id"] for s in steps if s["id"].startswith(f"s{turn - 1}-")]
        for i, (name, arguments) in enumerate(calls):
            steps.append(
                {"id": f"s{turn}-{i}", "tool": name, "arguments": arguments, "depends_on": before}
            )
    plan = {"name": "submit_plan", "args": {"steps": steps}, "id": "plan"}
    return AIMessage("", tool_calls=[plan])


def _finish() -> AIMessage:
    args: dict[str, Any] = {"output": "ledger posted"}
    return AIMessage("", tool_calls=[{"name": "finish", "args": args, "id": "finish"}])


def _ledger_policy(messages: list[BaseMessage]) -> AIMessage:
    """Deterministic: the next step is the number of ledger turns already taken.

    Under ``hybrid`` the writes belong to the ANALYZE phase; every other phase finishes.
    """
    step = " ".join(str(m.content) for m in messages if m.type == "human")
    if "Phase " in step and "Phase ANALYZE" not in step:
        return _finish()
    turns = [m.tool_calls[0]["name"] for m in messages if isinstance(m, AIMessage) and m.tool_calls]
    done = sum(1 for name in turns if name != "finish")
    if done >= len(LEDGER_STEPS):
        return _finish()
    calls = [
        {"name": name, "args": args, "id": f"s{done}-{i}"}
        for i, (name, args) in enumerate(LEDGER_STEPS[done])
    ]
    return AIMessage("", tool_calls=calls)


def _publish_logged(world: Path) -> ToolSpec:
    """The demo's publish tool, logging each execution to ``effects.log`` as it starts."""
    spec = publish_tool()
    inner = spec.run

    def run(args: Any, ctx: InvokeContext) -> AdapterOutput:
        dest = Path(ctx.workspace_root) / "published" / args.path
        entry = {"key": ctx.idempotency_key, "already": dest.exists(), "pid": os.getpid()}
        _append(world / "effects.log", json.dumps(entry))
        out = inner(args, ctx)
        _after_effect(world, "publish")
        return out

    return spec.with_(run=run)


def build_app(
    workload: str, arch: str, base: Path, lock: str = "shared"
) -> tuple[Any, dict[str, Any]]:
    """The compiled graph for ``workload`` over the trial directory, and its task."""
    world = base / "workspace"
    world.mkdir(parents=True, exist_ok=True)
    common: dict[str, Any] = {
        "home": base,
        "workspace": world,
        "approval_secret": SECRET,
        "history_turns": 50,
    }
    if workload == "demo":
        # the demo's own tools, with the publish tool logging its executions
        files = [_crashable(world, t) for t in FileAdapter(world).tools()]
        tools = [CorpusAdapter(), *files, _publish_logged(base)]
        app = build_graph(
            arch,
            model=OfflinePolicyModel(),
            tools=tools,
            checks=RESEARCH_CHECKS,
            stages=DEMO_STAGES,
            **common,
        )
        return app, demo_task()
    tools = ledger_tools(world, lock)
    return build_graph(arch, model=ledger_model(arch), tools=tools, **common), LEDGER_TASK


def ledger_model(arch: str) -> ScriptedChatModel:
    """The ledger workload's deterministic policy under ``arch`` (any process, any attempt
    answers a turn alike)."""
    policy = _ledger_plan if arch == "plan_execute" else _ledger_policy
    return ScriptedChatModel([policy] * 200)


def _interrupts(snapshot: Any) -> list[Any]:
    found = list(getattr(snapshot, "interrupts", ()) or ())
    for task in snapshot.tasks:
        found.extend(i for i in task.interrupts if all(i.id != f.id for f in found))
    return found


def run_attempt(base: Path, workload: str, arch: str, lock: str = "shared") -> int:
    """Drive the thread until it stops; write ``final.json``. Returns the exit code."""
    app, task = build_app(workload, arch, base, lock)
    cfg = {"configurable": {"thread_id": THREAD}, "recursion_limit": 500}
    for _ in range(_MAX_ROUNDS):
        snap = app.get_state(cfg)
        pending = _interrupts(snap)
        if pending:
            app.invoke(Command(resume={i.id: {"action": "approve"} for i in pending}), cfg)
        elif not snap.values:
            app.invoke({"task": task}, cfg)
        elif snap.next or snap.values.get("status") not in TERMINAL:
            # An empty ``next`` does not mean finished: with async durability a kill can
            # land after a step's writes were saved but before the next checkpoint was.
            app.invoke(None, cfg)
        else:
            values = snap.values
            final = {"status": values.get("status"), "results": values.get("results") or {}}
            tmp = base / "final.json.tmp"
            tmp.write_text(json.dumps(final, default=str))
            os.replace(tmp, base / "final.json")
            return 0
    return 3  # never stopped: the harness reports it as stuck


def _child(cmd: dict[str, Any]) -> None:
    """In the forked child: detach from the protocol pipes, run, and never return."""
    code = 1
    try:
        random.seed()  # not the parent's sequence
        if cmd.get("crash"):
            os.environ["TORTURE_CRASH"] = cmd["crash"]
        log = os.open(cmd["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        code = run_attempt(
            Path(cmd["dir"]), cmd["workload"], cmd["arch"], cmd.get("lock", "shared")
        )
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _supervise(pid: int, kill_after: float | None, timeout_s: float, parent: int) -> dict[str, Any]:
    """Wait for the child; SIGKILL it at ``kill_after`` (or at the timeout). Always reaps.

    If the harness itself dies meanwhile (we are re-parented), the child is killed too.
    """
    start = time.monotonic()
    limit = timeout_s if kill_after is None else min(kill_after, timeout_s)
    while time.monotonic() - start < limit and os.getppid() == parent:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return {"pid": pid, "killed": False, "timeout": False, "code": _code(status)}
        time.sleep(0.002)
    os.kill(pid, signal.SIGKILL)  # not reaped yet, so the pid is still ours
    _, status = os.waitpid(pid, 0)
    code = _code(status)
    killed = code == -signal.SIGKILL
    return {"pid": pid, "killed": killed, "timeout": kill_after is None, "code": code}


def _code(status: int) -> int:
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def serve() -> None:
    """The fork server loop: one JSON command per stdin line, one JSON answer per line.

    SIGTERM (the harness shutting down) kills and reaps the running attempt first.
    """
    parent, running = os.getppid(), [0]

    def stop(signum: int, frame: Any) -> None:
        if running[0]:
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(running[0], signal.SIGKILL)
                os.waitpid(running[0], 0)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    print(json.dumps({"ready": os.getpid()}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            _child(cmd)
        running[0] = pid
        timeout_s = float(cmd.get("timeout", 300))
        answer = _supervise(pid, cmd.get("kill_after"), timeout_s, parent)
        running[0] = 0
        if os.getppid() != parent:
            return  # the harness is gone: nobody to answer
        print(json.dumps(answer), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=["attempt", "serve"])
    parser.add_argument("--dir")
    parser.add_argument("--workload", choices=WORKLOADS, default="ledger")
    parser.add_argument("--arch", default="react")
    parser.add_argument("--lock", choices=("shared", "entry"), default="shared")
    opts = parser.parse_args()
    if opts.mode == "serve":
        serve()
        return
    sys.exit(run_attempt(Path(opts.dir), opts.workload, opts.arch, opts.lock))


if __name__ == "__main__":
    main()
