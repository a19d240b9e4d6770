"""Event logs for the metrics and diagnosis tests: built by hand, or recorded from real runs.

:class:`Log` writes a log event by event with ``make_event`` (the runtime's own ids) and
chosen timestamps, so each formula can be checked against numbers worked out by hand.
The recorders drive real graphs — the fault matrix's cells (ScriptedChatModel, FakeAdapter,
real SQLite), an approval answered by a person, the demo — and read back the store's log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.demo.build import build_demo_graph, demo_task
from execgraph.graph import build_graph
from execgraph.state.events import Event, EventType, make_event
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools.adapters.fake import FakeAdapter
from tests.reliability.matrix import run_cell
from tests.reliability.replies import finish, lookup, save
from tests.reliability.scenarios import FAULTS, TASK, Cell

__all__ = ["DEMO_PRICES", "Log", "Recorded", "approval_run", "clean_cell", "demo_run", "matrix_log"]

RUN = "r1"
DEMO_PRICES = {"offline-policy": {"input_per_mtok": 1.0, "output_per_mtok": 4.0}}


@dataclass
class Log:
    """A hand-built event log; every event gets the next timestamp unless one is given."""

    run_id: str = RUN
    events: list[Event] = field(default_factory=list)
    clock: float = 1000.0

    def add(self, type: EventType, ts: float | None = None, **kw: Any) -> Event:
        self.clock = ts if ts is not None else self.clock + 1.0
        event = make_event(type, self.run_id, **kw).model_copy(update={"ts": self.clock})
        self.events.append(event)
        return event

    def admitted(self, ts: float | None = None) -> None:
        self.add(EventType.RUN_ADMITTED, ts, payload={"goal": "g"})

    def finished(self, status: str = "COMPLETED", ts: float | None = None) -> None:
        self.add(EventType.RUN_FINISHED, ts, payload={"status": status, "reason": "r"})

    def reply(
        self,
        turn: int,
        tokens_in: int = 100,
        tokens_out: int = 10,
        *,
        model: str = "m",
        refused: str | None = None,
        calls: int = 1,
        seq: int = 1,
    ) -> None:
        tool_calls = [{"name": "x", "args": {}, "id": f"c{i}"} for i in range(calls)]
        data = {"content": "", "response_metadata": {"model_name": model}}
        payload: dict[str, Any] = {
            "message": {"type": "ai", "data": {**data, "tool_calls": tool_calls}},
            "tokens_in": tokens_in,
            "tokens_out": tokens_out,
        }
        if refused:
            payload["refused"] = refused
        self.add(EventType.MODEL_CALLED, turn_id=f"t{turn}", seq=seq, payload=payload)

    def control(self, turn: int, kind: str, content: str = "done", index: int = 0) -> None:
        decision_id = f"t{turn}.d{index}"
        payload = {"decision_id": decision_id, "kind": kind, "content": content}
        self.add(
            EventType.DECISION_RECORDED,
            turn_id=f"t{turn}",
            decision_id=decision_id,
            seq=index or None,
            payload=payload,
        )

    def verdict(self, turn: int, accepted: bool, **extra: Any) -> None:
        payload = {"turn": turn, "passed": [], "failed": [] if accepted else ["no"]}
        self.add(
            EventType.VERIFIER_VERDICT,
            turn_id=f"t{turn}",
            payload={**payload, "accepted": accepted, **extra},
        )

    def call(
        self,
        turn: int,
        tool: str,
        args: dict[str, Any],
        *,
        index: int = 0,
        gate: str = "allow",  # allow | require_approval | invalid:<Type> | denied:<message>
        outcome: str | None = "succeeded",
        started: bool = True,
        retries: int = 0,
        decided: bool = True,
    ) -> str:
        """One tool-call decision and its call's events; returns the call id."""
        turn_id, decision_id, call_id = f"t{turn}", f"t{turn}.d{index}", f"t{turn}.c{index}"
        ids = {"turn_id": turn_id, "decision_id": decision_id, "call_id": call_id}
        if decided:
            decision = {
                "decision_id": decision_id,
                "kind": "tool_call",
                "tool_name": tool,
                "arguments": args,
                "call_id": call_id,
            }
            self.add(
                EventType.DECISION_RECORDED,
                turn_id=turn_id,
                decision_id=decision_id,
                seq=index or None,
                payload=decision,
            )
        self.add(EventType.TOOL_REQUESTED, **ids, payload={"tool": tool, "arguments": args})
        if gate.startswith(("invalid:", "denied:")):
            kind, detail = gate.split(":", 1)
            typ = detail if kind == "invalid" else "PolicyDenied"
            message = "bad" if kind == "invalid" else detail
            self.add(
                EventType.TOOL_VALIDATION_FAILED if kind == "invalid" else EventType.TOOL_DENIED,
                **ids,
                payload={"type": typ, "message": message},
            )
            self.add(EventType.TOOL_COMPLETED, **ids, payload={"outcome": "failed"})
            return call_id
        args_hash = "h-" + "-".join(f"{k}={v}" for k, v in sorted(args.items()))
        resolved = {"tool": f"{tool}@1.0.0", "args_hash": args_hash, "verdict": gate}
        self.add(EventType.TOOL_RESOLVED, **ids, payload=resolved)
        if not started:
            if outcome is not None:
                self.add(EventType.TOOL_COMPLETED, **ids, payload={"outcome": outcome})
            return call_id
        self.start(call_id, turn, index, tool, attempt="a1", retries=retries, outcome=outcome)
        return call_id

    def start(
        self,
        call_id: str,
        turn: int,
        index: int,
        tool: str,
        *,
        attempt: str,
        retries: int = 0,
        outcome: str | None = "succeeded",
    ) -> None:
        """A dispatch of ``call_id`` (and its retries and end, when ``outcome`` is set)."""
        ids = {"turn_id": f"t{turn}", "decision_id": f"t{turn}.d{index}", "call_id": call_id}
        self.add(
            EventType.TOOL_STARTED, **ids, attempt_id=attempt, payload={"tool": f"{tool}@1.0.0"}
        )
        for n in range(1, retries + 1):
            self.add(EventType.TOOL_RETRIED, **ids, attempt_id=attempt, seq=n, payload={})
        if outcome is not None:
            self.add(
                EventType.TOOL_COMPLETED, **ids, attempt_id=attempt, payload={"outcome": outcome}
            )


@dataclass
class Recorded:
    """A real run's log, its final state values and the evidence its calls observed."""

    events: list[Event]
    values: dict[str, Any]
    observed: list[dict[str, Any]]
    status: str | None


def _recorded(store: SqliteExecutionStore, run_id: str, values: dict[str, Any]) -> Recorded:
    return Recorded(store.events(run_id), values, store.evidence(run_id), values.get("status"))


def matrix_log(tmp: Path, fault: str, arch: str = "react", cell: Cell | None = None) -> Recorded:
    """A fault-matrix cell run for real (or ``cell``), its invariants checked, read back."""
    cell = cell or FAULTS[fault](arch)
    report = run_cell(cell, tmp)
    assert report.ok, report.problems
    with SqliteExecutionStore(tmp / "exec.db") as store:
        return _recorded(store, f"{cell.fault}-{cell.arch}", {"status": report.status})


def clean_cell(arch: str = "react") -> Cell:
    """Look the item up, save it, finish: no fault, nothing refused, nothing repeated."""
    return Cell(
        "clean", arch, [lookup(), save(), finish()], "COMPLETED", {"lookup": 1, "save": 1}, 2
    )


def approval_run(tmp: Path, answer: str) -> Recorded:
    """``save`` behind a person's approval, answered ``answer`` (approve / reject)."""
    fake = FakeAdapter()
    fake.tool("lookup", effect="read")
    fake.tool("save", effect="write", verify="pass")
    store = SqliteExecutionStore(tmp / "exec.db")
    replies = [lookup(), save(), finish(), finish("gave up")]
    graph = build_graph(
        "react",
        model=ScriptedChatModel(replies),
        tools=fake.tools(),
        policy=[{"tool": "save", "decision": "require_approval", "reason": "a person checks"}],
        store=store,
        checkpointer=InMemorySaver(),
        home=tmp,
        workspace=tmp / "ws",
    )
    cfg: Any = {"configurable": {"thread_id": RUN}}
    task = {**TASK, "budgets": {"model_calls": 4, "tool_calls": 4}}
    graph.invoke({"task": task}, cfg)
    for _ in range(3):
        pending = graph.get_state(cfg).interrupts
        if not pending:
            break
        decision = {"action": answer, "approver": "tester", "reason": "not now"}
        graph.invoke(Command(resume={i.id: decision for i in pending}), cfg)
    values = dict(graph.get_state(cfg).values)
    fake.close()
    recorded = _recorded(store, RUN, values)
    store.close()
    return recorded


def demo_run(tmp: Path, arch: str = "react") -> Recorded:
    """The demo task under ``arch`` with the offline policy, priced, publish approved."""
    store = SqliteExecutionStore(tmp / "exec.db")
    graph = build_demo_graph(
        arch, home=tmp, store=store, checkpointer=InMemorySaver(), prices=DEMO_PRICES
    )
    cfg: Any = {"configurable": {"thread_id": RUN}}
    graph.invoke({"task": demo_task()}, cfg)
    for _ in range(5):
        pending = graph.get_state(cfg).interrupts
        if not pending:
            break
        approve = {"action": "approve", "approver": "tester"}
        graph.invoke(Command(resume={i.id: approve for i in pending}), cfg)
    values = dict(graph.get_state(cfg).values)
    recorded = _recorded(store, RUN, values)
    store.close()
    return recorded
