"""The ``execgraph trace`` timeline: a run's events per turn, each call's stages grouped.

A ``tool.raised`` row shows, for the developer, what the tool, its verify check or its
reconcile probe raised: type, message and (innermost) traceback, as the event log keeps it.
Every detail quotes what a model, a tool or a client wrote, so each is made inert
(:mod:`execgraph.cli.inert`) before it is printed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from rich.table import Table
from rich.text import Text

from execgraph.cli.approvals import call_text
from execgraph.cli.inert import inert, short
from execgraph.cli.render import raised_text

__all__ = ["trace_table"]


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%H:%M:%S.%f")[:-3]


def _hashes(payload: dict[str, Any]) -> str:
    """The arguments' hash the call is bound to (as its record keeps it), and the hash of
    the arguments as proposed when normalization changed them (both shortened)."""
    normalized, requested = payload.get("args_hash"), payload.get("requested_hash")
    if not normalized:
        return ""
    shown = f" · args {str(normalized)[:12]}"
    return shown + (
        f" (requested {str(requested)[:12]})" if requested not in (None, normalized) else ""
    )


def _event_detail(event: Any) -> str:
    p = event.payload or {}
    details: dict[str, Callable[[], str]] = {
        "run.admitted": lambda: f"goal: {short(p.get('goal', ''), 70)}",
        "run.finished": lambda: f"{p.get('status')} ({p.get('reason', '')})",
        "model.called": lambda: f"tokens {p.get('tokens_in')} in / {p.get('tokens_out')} out",
        "decision.recorded": lambda: (
            f"{p.get('kind')} "
            + (
                call_text(p.get("tool_name"), p.get("arguments"))
                if p.get("tool_name")
                else short(p.get("content", ""), 60)
            )
        ),
        "tool.requested": lambda: call_text(p.get("tool"), p.get("arguments")),
        "tool.resolved": lambda: f"{p.get('tool')} · policy {p.get('verdict')}" + _hashes(p),
        "tool.started": lambda: str(p.get("tool", "")),
        "approval.requested": lambda: f"{p.get('tool')}@{p.get('version')}: {p.get('reason')}",
        "approval.resolved": lambda: (
            f"{p.get('action')} by {p.get('approver')}"
            + (f" ({p['reason']})" if p.get("reason") else "")
        ),
        "tool.side_effect_observed": lambda: (
            f"committed={p.get('committed')} " + short(p.get("summary", ""), 60)
        ),
        "tool.completed": lambda: (
            f"{p.get('outcome')} / {p.get('status')}"
            + (
                f" · {p.get('committed_items')} committed, {p.get('pending_items')} pending"
                f" · recovery: {short(p.get('recovery_ref') or 'none', 200)}"
                if "pending_items" in p
                else ""
            )
        ),
        "tool.raised": lambda: raised_text(p),
    }
    render = details.get(str(event.type))
    return render() if render else short(p, 80) if p else ""


def trace_table(events: Sequence[Any]) -> Table:
    """The event timeline per turn: model call and decisions, then each call's events
    grouped (requested → resolved → approval → started → side effect → completed)."""
    table = Table(title="Trace", title_justify="left")
    for name in ("time", "turn", "call", "event", "detail"):
        table.add_column(name, overflow="fold")
    by_call: dict[str, list[Any]] = {}
    for event in events:
        if event.call_id:
            by_call.setdefault(event.call_id, []).append(event)
    turn: str | None = None
    for event in events:
        if event.call_id is not None and by_call.get(event.call_id) is None:
            continue  # already shown with its call
        if event.turn_id and event.turn_id != turn and turn is not None:
            table.add_section()
        turn = event.turn_id or turn
        for member in by_call.pop(event.call_id, [event]) if event.call_id else [event]:
            _trace_row(table, member)
    return table


def _trace_row(table: Table, event: Any) -> None:
    kind = str(event.type)
    failing = ("tool.denied", "tool.validation_failed", "run.rejected", "tool.raised")
    style = "red" if kind in failing else ""
    if kind == "tool.completed":
        style = "green" if (event.payload or {}).get("status") == "OK" else "yellow"
    table.add_row(
        _when(event.ts),
        Text(short(event.turn_id or "", 40)),
        Text(short(event.call_id or "", 40)),
        Text(short(kind, 60), style=style),
        Text(inert(_event_detail(event), lines=True)),  # every detail, whatever it quotes
    )
