"""The fault-injection matrix: run one cell, check its invariants, print the whole table.

``python -m tests.reliability.matrix [--markdown]`` runs every fault under every
architecture and prints fault x architecture, each cell ``PASS <status>`` or
``FAIL <first problem>``, then ``unauthorized executions = N``.

A cell runs one architecture on real SQLite (execution store and LangGraph checkpoints
under a temporary directory), with a scripted model and fake tools that count what they
really did. :func:`check_cell` then asserts, per cell: the final status; the real
executions per tool; the budget charged per kind (model calls = scripted replies used,
tool calls = requests dispatched, tokens = the usage the model reported, every call
logged as ``model.called``); a complete, ordered event log (every ``tool.requested``
call has exactly one ``tool.completed``, after it, and a call's events follow the pipeline
order); no side effect committed twice; no execution without an ``allow`` verdict.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from execgraph.graph import build_graph
from execgraph.nodes.cancel import request_cancel
from execgraph.state.events import Event
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.testing.scripted import ScriptExhausted
from execgraph.tools.adapters.fake import FakeAdapter
from tests.reliability.scenarios import ARCHS, FAULTS, STAGES, TASK, Cell

__all__ = [
    "ARCHS",
    "FAULTS",
    "Cell",
    "CellReport",
    "check_cell",
    "log_problems",
    "main",
    "render",
    "run_all",
    "run_cell",
]

_WAIT_S = 30.0  # bound on every wait for a thread; never an assertion about durations
_PIPELINE = {
    "tool.requested": 0,
    "tool.resolved": 1,
    "tool.validation_failed": 1,
    "tool.denied": 1,
    "approval.requested": 2,
    "approval.resolved": 3,
    "tool.started": 4,
    "tool.output": 5,
    "tool.side_effect_observed": 6,
    "tool.reconciled": 7,
    "tool.completed": 8,
}


@dataclass
class CellReport:
    """What one cell produced: its final status, any broken invariant, unauthorized runs."""

    fault: str
    arch: str
    status: str | None
    problems: list[str] = field(default_factory=list)
    unauthorized: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    def label(self) -> str:
        return f"PASS {self.status}" if self.ok else f"FAIL {self.problems[0]}"


def _tools(cell: Cell) -> tuple[FakeAdapter, list[Any]]:
    fake = FakeAdapter()
    fake.tool("lookup", effect="read", behaviour=cell.lookup, timeout_s=cell.lookup_timeout_s)
    fake.tool("save", effect="write", behaviour=cell.save, verify="pass", reconcile=cell.reconcile)  # type: ignore[arg-type]
    fake.tool("send_email", effect="write")
    return fake, fake.tools()


def _invoke(
    app: Any,
    task: dict[str, Any],
    cfg: dict[str, Any],
    cell: Cell,
    fake: FakeAdapter,
    store: SqliteExecutionStore,
) -> dict[str, Any]:
    if cell.cancel_on is None:
        return app.invoke({"task": task}, cfg)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["out"] = app.invoke({"task": task}, cfg)
        except BaseException as exc:  # surfaced in the caller's thread below
            box["error"] = exc

    runner = threading.Thread(target=target, daemon=True)
    runner.start()
    if not fake.wait_started(cell.cancel_on, _WAIT_S):
        raise TimeoutError(f"{cell.cancel_on} never started")
    request_cancel(store, cfg["configurable"]["thread_id"], "the user pressed stop")
    runner.join(_WAIT_S)
    if runner.is_alive():
        fake.close()
        runner.join(_WAIT_S)
        raise TimeoutError("the run did not stop after the cancel request")
    if "error" in box:
        raise box["error"]
    return box["out"]


def run_cell(cell: Cell, tmp: Path) -> CellReport:
    """Run ``cell`` on real SQLite under ``tmp`` and check every invariant."""
    fake, tools = _tools(cell)
    store = SqliteExecutionStore(tmp / "exec.db")
    model = ScriptedChatModel(cell.replies)
    app = build_graph(
        cell.arch,
        model=model,
        tools=tools,
        policy=cell.policy,
        store=store,
        workspace=tmp / "ws",
        home=tmp,
        stages=STAGES,
        **cell.settings,
    )
    run_id = f"{cell.fault}-{cell.arch}"
    cfg = {"configurable": {"thread_id": run_id}}
    task = {**TASK, "budgets": {**TASK["budgets"], **cell.budgets}}
    try:
        out = _invoke(app, task, cfg, cell, fake, store)
        admitted = [
            s.values["contract"] for s in app.get_state_history(cfg) if s.values.get("contract")
        ][-1]
    except ScriptExhausted:  # the run asked the model for more than the cell scripted
        return CellReport(cell.fault, cell.arch, None, ["did not stop: model called past script"])
    except Exception as exc:  # a crash is a failed cell, reported like any other
        return CellReport(cell.fault, cell.arch, None, [f"raised {type(exc).__name__}"])
    finally:
        fake.close()
    problems, unauthorized = check_cell(cell, out, model, fake, store.events(run_id), admitted)
    return CellReport(cell.fault, cell.arch, out.get("status"), problems, unauthorized)


def _unauthorized(cell: Cell, fake: FakeAdapter, by_call: dict[str, list[Event]]) -> int:
    """Real executions of a forbidden tool, or of a call without an ``allow`` verdict."""
    count = 0
    for real in fake.calls:
        events = by_call.get(real.call_id, [])
        allowed = any(
            e.type == "tool.resolved" and e.payload.get("verdict") == "allow" for e in events
        ) or any(
            e.type == "approval.resolved" and e.payload.get("action") == "approve" for e in events
        )
        refused = any(e.type in ("tool.denied", "tool.validation_failed") for e in events)
        count += real.tool in cell.forbidden or not allowed or refused
    return count


def log_problems(by_call: dict[str, list[Event]], results: dict[str, Any]) -> list[str]:
    problems = []
    for call_id, events in by_call.items():
        types = [str(e.type) for e in events if str(e.type) in _PIPELINE]
        if "tool.requested" not in types:
            continue
        if types.count("tool.completed") != 1:
            problems.append(f"{call_id}: {types.count('tool.completed')} tool.completed events")
        elif types[-1] != "tool.completed" or types.index("tool.requested") != 0:
            problems.append(f"{call_id}: completed is not last / requested not first")
        ranks = [_PIPELINE[t] for t in types]
        if ranks != sorted(ranks):
            problems.append(f"{call_id}: events out of pipeline order {types}")
        if call_id not in results:
            problems.append(f"{call_id}: requested but has no result in state")
    return problems


def check_cell(
    cell: Cell,
    out: dict[str, Any],
    model: ScriptedChatModel,
    fake: FakeAdapter,
    events: Sequence[Event],
    admitted: dict[str, Any],
) -> tuple[list[str], int]:
    """Every invariant of one cell -> (problems, unauthorized executions)."""
    problems: list[str] = []
    status = out.get("status")
    if status != cell.status:
        reason = (out.get("error") or {}).get("message", "")
        problems.append(f"{status} (expected {cell.status}): {reason}"[:160])
    if cell.error_type and (out.get("error") or {}).get("type") != cell.error_type:
        problems.append(f"error type {(out.get('error') or {}).get('type')} != {cell.error_type}")
    if cell.rejected_finish and (out.get("verification") or {}).get("accepted") is not False:
        problems.append("the verifier did not reject the unsupported finish")
    for tool, expected in cell.executions.items():
        if (n := fake.call_count(tool)) != expected:
            problems.append(f"{tool} really ran {n}x (expected {expected})")
    used = (out.get("budget") or {}).get("used", {})
    if model.remaining or used.get("model_calls", 0) != len(model.calls):
        problems.append(
            f"model_calls charged {used.get('model_calls', 0)}, replies used "
            f"{len(model.calls)} of {len(cell.replies)}"
        )
    called = [e for e in events if e.type == "model.called"]
    if len(called) != len(model.calls):
        problems.append(f"{len(called)} model.called events for {len(model.calls)} model calls")
    for kind in ("tokens_in", "tokens_out"):
        if used.get(kind, 0) != sum(e.payload.get(kind, 0) for e in called):
            problems.append(f"{kind} charged {used.get(kind, 0)} differs from the model's usage")
    by_call: dict[str, list[Event]] = {}
    for e in events:
        if e.call_id:
            by_call.setdefault(e.call_id, []).append(e)
    dispatched = sum(1 for evs in by_call.values() if any(e.type == "tool.requested" for e in evs))
    if not used.get("tool_calls", 0) == dispatched == cell.tool_calls:
        problems.append(
            f"tool_calls charged {used.get('tool_calls', 0)}, dispatched {dispatched}, "
            f"expected {cell.tool_calls}"
        )
    results = out.get("results") or {}
    problems += log_problems(by_call, results)
    if cell.first:
        tool, expected = cell.first
        ids = [
            e.call_id for e in events if e.type == "tool.requested" and e.payload["tool"] == tool
        ]
        seen = (results.get(ids[0]) or {}).get("status") if ids else None
        if seen != expected:
            problems.append(f"first {tool} call observed {seen} (expected {expected})")
    per_key = Counter(e.idempotency_key for e in fake.effects)
    per_item = Counter((e.tool, e.item) for e in fake.effects)
    if max([*per_key.values(), *per_item.values(), 0]) > 1:
        problems.append(f"a side effect was committed twice: {dict(per_item)}")
    if out.get("contract") != admitted:
        problems.append("the task contract changed during the run")
    unauthorized = _unauthorized(cell, fake, by_call)
    if unauthorized:
        problems.append(f"{unauthorized} unauthorized execution(s)")
    return problems, unauthorized


def run_all(cells: Iterable[Cell]) -> list[CellReport]:
    """Run ``cells``, each in its own temporary directory."""
    reports = []
    for cell in cells:
        with tempfile.TemporaryDirectory(prefix="execgraph-matrix-") as tmp:
            reports.append(run_cell(cell, Path(tmp)))
    return reports


def render(reports: Sequence[CellReport], *, markdown: bool = False) -> str:
    """The fault x architecture table and the unauthorized-executions line."""
    grid = {(r.fault, r.arch): r.label() for r in reports}
    faults = list(dict.fromkeys(r.fault for r in reports))
    header = ["fault", *ARCHS]
    rows = [[f, *(grid.get((f, a), "-") for a in ARCHS)] for f in faults]
    total = sum(r.unauthorized for r in reports)
    passed = sum(r.ok for r in reports)
    footer = [f"cells passing = {passed}/{len(reports)}", f"unauthorized executions = {total}"]
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        return "\n".join([*lines, "", *footer])
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*header), *(fmt.format(*row) for row in rows), *footer])


def main(argv: Sequence[str] | None = None) -> int:
    """Run the matrix and print it; exit 1 if any cell fails."""
    parser = argparse.ArgumentParser(prog="python -m tests.reliability.matrix")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.add_argument("--fault", action="append", choices=list(FAULTS), help="only these")
    args = parser.parse_args(argv)
    faults = args.fault or list(FAULTS)
    reports = run_all(FAULTS[f](a) for f in faults for a in ARCHS)
    print(render(reports, markdown=args.markdown))
    return 0 if all(r.ok for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
