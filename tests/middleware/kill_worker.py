"""A fork server for the SIGKILL torture of a create_agent agent, with or without
ExecutorMiddleware.

``python -m tests.middleware.kill_worker serve`` imports everything once and answers one
JSON line per attempt: it forks a child that continues the agent's run in ``dir`` (a
SQLite checkpointer and, with the middleware, a SQLite execution store there), kills it
with SIGKILL after ``kill_after`` seconds (None: lets it finish) and reports ``{"killed":
bool, "code": int | None}``. A fork costs milliseconds where a new interpreter costs
seconds of imports, so dozens of kills fit in a few seconds.

The agent makes ``TURNS`` turns of two parallel ``append`` calls with fixed ids; ``append``
writes its line to ``effects.log`` (fsynced) and then takes a moment, the window in which
a kill lands after the effect and before anything else is saved.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver

from execgraph import ExecutorMiddleware, ScriptedChatModel

TURNS = 40
CONFIG: dict[str, Any] = {"configurable": {"thread_id": "torture"}}


def _reply(messages: list[BaseMessage]) -> AIMessage:
    turn = sum(isinstance(m, AIMessage) for m in messages)
    if turn >= TURNS:
        return AIMessage("done")
    calls = [
        {"name": "append", "args": {"line": f"t{turn}-{j}"}, "id": f"call_{turn}_{j}"}
        for j in range(2)
    ]
    return AIMessage("", tool_calls=calls)


def _agent(root: Path, with_executor: bool, linger: float = 0.03) -> Any:
    effects = root / "effects.log"

    @tool
    def append(line: str) -> str:
        """Append a line to the effects log (not idempotent: twice is a duplicate)."""
        with open(effects, "a") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        time.sleep(linger)
        return "appended"

    append.metadata = {"effect": "write"}
    model = ScriptedChatModel([_reply] * (TURNS + 1))
    middleware = [ExecutorMiddleware(home=root / "home")] if with_executor else []
    saver = SqliteSaver(sqlite3.connect(root / "checkpoints.db", check_same_thread=False))
    return create_agent(model, tools=[append], middleware=middleware, checkpointer=saver)


def _continue(root: Path, with_executor: bool, linger: float = 0.03) -> None:
    """Run the agent's run to its end: start it, or continue it from its last checkpoint."""
    app = _agent(root, with_executor, linger)
    state = app.get_state(CONFIG)
    if not state.values:
        app.invoke({"messages": [("user", "append the lines")]}, CONFIG)
    elif state.next or state.tasks:  # tasks whose writes are saved are not in ``next``
        app.invoke(None, CONFIG)


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _attempt(cmd: dict[str, Any]) -> dict[str, Any]:
    """One attempt; killed after ``kill_after`` seconds, or (``kill_on_effect``) as soon as
    the second turn's first effect is on disk while its tool still runs (each lingers 2 s):
    the kill that falls between an effect and the checkpoint that would record it."""
    root = Path(cmd["dir"])
    on_effect = bool(cmd.get("kill_on_effect"))
    before = _lines(root / "effects.log")
    pid = os.fork()
    if pid == 0:  # the child: continue the run, say nothing on the server's stdout
        code = 0
        try:
            log = os.open(root / "worker.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.dup2(log, 1)
            os.dup2(log, 2)
            _continue(root, bool(cmd["with_executor"]), 2.0 if on_effect else 0.03)
        except BaseException as exc:  # reported by the exit code and the log
            print(f"attempt failed: {exc!r}", file=sys.stderr)
            code = 3
        finally:
            sys.stderr.flush()
            os._exit(code)
    deadline = None if cmd["kill_after"] is None else time.monotonic() + cmd["kill_after"]
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return {"killed": False, "code": os.waitstatus_to_exitcode(status)}
        # the first turn's two effects, then one of the second's: a run under way
        effect_landed = on_effect and _lines(root / "effects.log") > before + 2
        if effect_landed or (deadline is not None and time.monotonic() >= deadline):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return {"killed": True, "code": None}
        time.sleep(0.002)


def main() -> None:
    if sys.argv[1:] != ["serve"]:
        raise SystemExit("usage: python -m tests.middleware.kill_worker serve")
    print(json.dumps({"ready": os.getpid()}), flush=True)
    for line in sys.stdin:
        print(json.dumps(_attempt(json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
