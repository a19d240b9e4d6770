"""5. Resume: a new process opens the long run's thread and runs it to its next end.

execgraph's long run stops at an approval pause (an ``irreversible`` tool after the N
no-op steps); the new process reads the state (``get_state``, which yields the pending
interrupt), then approves it: the executor reconciles any started-but-uncommitted record,
runs the tool, and the model finishes. LangGraph's long run ended with an answer; the new
process does its own first ``get_state`` and then a new turn (a user message, one no-op
tool call, an answer). Each is timed inside the worker, after imports; the figure compared
is first ``get_state`` + the resumed run. Each repetition works on a copy of the thread.

Worker: ``python -m bench.resume --framework NAME --dir DIR`` prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.core import Bench, Row, Target
from bench.workload import EXECGRAPH

__all__ = ["measure", "resume_in_new_process"]

_ROOT = Path(__file__).resolve().parent.parent


def _worker(framework: str, directory: Path) -> dict[str, Any]:
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.types import Command

    from bench.workload import build_app, config, durability, finish_reply, tool_call
    from execgraph.testing import ScriptedChatModel

    if framework == EXECGRAPH:
        replies: list[Any] = [finish_reply(framework)]
    else:
        replies = [tool_call("noop", {"i": -1}, "resume-0"), AIMessage(content="done")]
    model = ScriptedChatModel(replies)
    # import what the build would import lazily, so "build" is only opening and compiling
    if framework == EXECGRAPH:
        import execgraph.graph
        import execgraph.state.store.sqlite  # noqa: F401
    else:
        import langchain.agents  # noqa: F401
        import langgraph.prebuilt  # noqa: F401
    t0 = time.perf_counter()
    app = build_app(framework, model, directory)
    t1 = time.perf_counter()
    snapshot = app.get_state(config())
    t2 = time.perf_counter()
    if framework == EXECGRAPH:
        pending = [i.id for i in snapshot.interrupts]
        command: Any = Command(resume={i: {"action": "approve"} for i in pending})
        out = app.invoke(command, config(), **durability(framework))
        status = f"{out.get('status')} ({len(pending)} interrupt)"
    else:
        turn = {"messages": [HumanMessage("Once more, then stop.")]}
        out = app.invoke(turn, config(), **durability(framework))
        status = "DONE" if out["messages"][-1].content == "done" else "UNEXPECTED"
    t3 = time.perf_counter()
    messages = len(snapshot.values.get("messages", [])) if framework != EXECGRAPH else None
    return {
        "open_build_ms": (t1 - t0) * 1000,
        "get_state_ms": (t2 - t1) * 1000,
        "resume_ms": (t3 - t2) * 1000,
        "status": status,
        "remaining_replies": model.remaining,
        "messages_in_thread": messages,
    }


def _copy_thread(source: Path, target: Path) -> Path:
    """Copy a thread's SQLite files (not ``-shm``: SQLite rebuilds it from the WAL)."""
    target.mkdir(parents=True, exist_ok=True)
    for path in source.iterdir():
        if path.is_file() and not path.name.endswith("-shm"):
            shutil.copy2(path, target / path.name)
    return target


def resume_in_new_process(framework: str, directory: Path) -> dict[str, Any]:
    """Run the worker in a fresh interpreter on ``directory``; its JSON result."""
    env = {**os.environ, "PYTHONPATH": str(_ROOT)}
    cmd = [sys.executable, "-m", "bench.resume", "--framework", framework, "--dir", str(directory)]
    proc = subprocess.run(
        cmd, cwd=_ROOT, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"resume worker failed ({framework}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(bench: Bench) -> list[Row]:
    """Rows: execgraph's resume vs create_agent's first get_state + new turn."""
    reps = 1 if bench.quick else 3
    figures: dict[str, dict[str, float]] = {}
    statuses: dict[str, set[str]] = {}
    for fw in (EXECGRAPH, "create_agent", "create_react_agent"):
        source = bench.long_run(fw).directory
        assert source is not None
        bench.log(f"resume: {fw}, {bench.long_steps}-step thread x {reps}")
        samples = []
        for _ in range(reps):
            copy = _copy_thread(source, bench.fresh_dir(f"resume-{fw}"))
            try:
                samples.append(resume_in_new_process(fw, copy))
            finally:
                shutil.rmtree(copy, ignore_errors=True)  # a 1,000-step copy is ~0.5 GB
        statuses[fw] = {s["status"] for s in samples}
        figures[fw] = {
            key: statistics.median(s[key] for s in samples)
            for key in ("open_build_ms", "get_state_ms", "resume_ms")
        }
        figures[fw]["total_ms"] = figures[fw]["get_state_ms"] + figures[fw]["resume_ms"]
    bench.extras["resume"] = figures
    ours = figures[EXECGRAPH]
    rows = []
    for fw in ("create_agent", "create_react_agent"):
        base = figures[fw]
        rows.append(
            Row(
                "5 resume",
                f"{bench.long_steps}-step thread, new process",
                ours["total_ms"],
                base["total_ms"],
                "ms",
                f"{fw} get_state+turn",
                Target(0.2, "<= 0.2x") if fw == "create_agent" else None,
                note=(
                    f"execgraph get_state {ours['get_state_ms']:.0f} + resume "
                    f"{ours['resume_ms']:.0f} (build {ours['open_build_ms']:.0f}) "
                    f"[{', '.join(sorted(statuses[EXECGRAPH]))}]; {fw} get_state "
                    f"{base['get_state_ms']:.0f} + turn {base['resume_ms']:.0f} "
                    f"(build {base['open_build_ms']:.0f})"
                ),
            )
        )
    return rows


def main() -> None:
    """Worker entry point."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--framework", required=True)
    parser.add_argument("--dir", required=True, type=Path)
    opts = parser.parse_args()
    print(json.dumps(_worker(opts.framework, opts.dir)))


if __name__ == "__main__":
    main()
