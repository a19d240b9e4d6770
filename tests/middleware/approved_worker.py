"""A worker process for the crash of an approved call: ``python -m
tests.middleware.approved_worker MODE DIR [--probe]``.

The agent (``create_agent`` with ExecutorMiddleware, SQLite checkpoints and execution
store under ``DIR``) makes one call of ``pay``, which declares no effect, so a person
approves it. Modes, one process each:

- ``ask``: start the run; it pauses for the approval.
- ``approve``: answer it; ``pay`` writes its payment to ``DIR/payments.log`` (fsynced)
  and then keeps running, as a slow provider call does: the test SIGKILLs this process
  there, after the approval and during the tool.
- ``restart``: continue the run from its last checkpoint as a restarted worker does (a
  question asked again is answered, and counted), then print one JSON line: the payments
  made, the call's recorded outcome, what the model was told, the run's end state.

``--probe`` declares a reconcile probe for ``pay`` (it reads the payments log), so the
restart can find out what happened instead of reporting ``unknown``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command
from pydantic import BaseModel

from execgraph import ExecutorMiddleware, ScriptedChatModel, from_langchain
from execgraph.tools.invocation import AdapterOutput, InvokeContext

CONFIG: dict[str, Any] = {"configurable": {"thread_id": "pay-ann"}}
PAYMENT = {"to": "ann", "amount": 40}
HANG_S = 120.0


def _reply(messages: list[BaseMessage]) -> AIMessage:
    """Pay once; after the payment's answer, say what it was."""
    answers = [m for m in messages if isinstance(m, ToolMessage)]
    if answers:
        return AIMessage(f"payment: {answers[-1].content[:200]}")
    return AIMessage("", tool_calls=[{"name": "pay", "args": PAYMENT, "id": "call_pay"}])


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def agent(root: Path, *, hang: bool, probe: bool) -> Any:
    """The agent, its payments going to ``root/payments.log``."""
    payments = root / "payments.log"

    @tool
    def pay(to: str, amount: int) -> str:
        """Pay someone (irreversible: it declares no effect)."""
        with open(payments, "a") as fh:
            fh.write(f"{to} {amount}\n")
            fh.flush()
            os.fsync(fh.fileno())
        if hang:
            time.sleep(HANG_S)  # the provider is slow to answer: killed here
        return f"paid {to} {amount}"

    def paid(args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        asked = args.model_dump()
        line = f"{asked['to']} {asked['amount']}"
        return AdapterOutput(committed=line in _lines(payments), summary="read payments.log")

    declared = [from_langchain(pay, reconcile=paid)] if probe else []
    middleware = ExecutorMiddleware(home=root / "home", tools=declared)
    saver = SqliteSaver(sqlite3.connect(root / "checkpoints.db", check_same_thread=False))
    model = ScriptedChatModel([_reply] * 4)
    return create_agent(model, tools=[pay], middleware=[middleware], checkpointer=saver)


def restart(app: Any) -> dict[str, Any]:
    """Continue the run from its last checkpoint (``invoke(None)``: the approval given
    before the crash is in it) to its end; a question asked again is answered, and
    counted."""
    asked_again = 0
    out = app.invoke(None, CONFIG)
    while out.get("__interrupt__") and asked_again < 5:
        asked_again += 1
        out = app.invoke(Command(resume={"type": "approve"}), CONFIG)
    values = app.get_state(CONFIG).values
    answer = next(m for m in values["messages"] if isinstance(m, ToolMessage))
    return {
        "asked_again": asked_again,
        "answer": str(answer.content),
        "answer_status": answer.status,
        "last": str(values["messages"][-1].content),
        "status": (values.get("execgraph_status") or {}).get("status"),
    }


def main(argv: list[str]) -> None:
    mode, root, probe = argv[0], Path(argv[1]), "--probe" in argv
    app = agent(root, hang=mode == "approve", probe=probe)
    if mode == "ask":
        out = app.invoke({"messages": [("user", "pay Ann 40")]}, CONFIG)
        print(json.dumps({"asked": [i.value["tool"] for i in out["__interrupt__"]]}), flush=True)
    elif mode == "approve":
        app.invoke(Command(resume={"type": "approve"}), CONFIG)
        print(json.dumps({"finished": True}), flush=True)  # not reached: killed in the tool
    elif mode == "restart":
        print(json.dumps(restart(app)), flush=True)
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
