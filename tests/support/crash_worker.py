"""A process that runs one write through the executor on a SQLite checkpointer.

``run`` performs the write; with ``--crash`` the process dies (``os._exit``) right after
the side effect and before the executor can commit. ``resume`` continues the same thread
in a fresh process and prints the committed ToolResult as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from execgraph.graph.executor import build_executor
from execgraph.nodes.executor import ExecutorDeps
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.tools import AdapterOutput, InvokeContext, PolicyEngine, ToolRegistry, tool_spec


def _tools(root: Path, crash: bool, probe: bool) -> list[Any]:
    def reconcile(args: Any, ctx: InvokeContext) -> AdapterOutput | None:
        target = root / args.path
        lines = target.read_text().splitlines() if target.exists() else []
        return AdapterOutput(committed=args.line in lines)

    @tool_spec(effect="write", path_args=["path"], reconcile=reconcile if probe else None)
    def append_line(path: str, line: str) -> str:
        """Append one line to a file (not idempotent: running twice duplicates it)."""
        with open(root / path, "a") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        if crash:
            os._exit(17)  # die after the effect, before the executor commits
        return "appended"

    return [append_line]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["run", "resume"])
    parser.add_argument("--dir", required=True)
    parser.add_argument("--crash", action="store_true")
    parser.add_argument("--probe", action="store_true")
    opts = parser.parse_args()
    base = Path(opts.dir)
    root = base / "ws"
    root.mkdir(exist_ok=True)
    deps = ExecutorDeps(
        registry=ToolRegistry(_tools(root, opts.crash, opts.probe)),
        policy=PolicyEngine(),
        store=SqliteExecutionStore(base / "exec.db"),
        approval_secret=b"crash-test",
    )
    saver = SqliteSaver(sqlite3.connect(base / "checkpoints.db", check_same_thread=False))
    app = build_executor(deps, checkpointer=saver)
    config = {"configurable": {"thread_id": "crash-thread"}}
    request = {
        "run_id": "run-crash",
        "turn_id": "turn-1",
        "call_id": "call-1",
        "tool": {"name": "append_line"},
        "arguments": {"path": "ledger.txt", "line": "debit 100"},
        "workspace": {"id": "ws", "root": str(root)},
    }
    out = app.invoke({"request": request} if opts.mode == "run" else None, config)
    print(json.dumps(out["results"]["call-1"]))


if __name__ == "__main__":
    main()
