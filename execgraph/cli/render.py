"""Rich rendering for the ``execgraph`` CLI: progress lines, final report, tables, trace.

Presentation only. Everything shown comes from graph state or the event log, and every
piece of text that a model, a tool or a client produced is rendered as plain ``Text``
(never as rich markup, so a document containing ``[bold]`` or ``[doc-id]`` prints as
written) and inert (:mod:`execgraph.cli.inert`: no control sequence reaches the
terminal). Pending calls are shown by :mod:`execgraph.cli.approvals`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from execgraph.cli.approvals import call_text, follow_ups, interrupt_summary, wait_summary
from execgraph.cli.inert import inert, short
from execgraph.engines.spec import CANCELLED, RunView
from execgraph.state.contracts import BudgetKind

__all__ = [
    "STATUS_STYLE",
    "budget_table",
    "evidence_table",
    "partial_lines",
    "progress_lines",
    "raised_text",
    "render_final",
    "render_status",
    "render_waiting",
    "replay_table",
    "report_files",
    "runs_table",
]

STATUS_STYLE = {
    "COMPLETED": "bold green",
    "WAITING": "bold yellow",
    "RUNNING": "bold cyan",
    "FAILED": "bold red",
    "PARTIAL": "bold red",
    "BUDGET_EXHAUSTED": "bold red",
    "CANCELLED": "bold magenta",
    "TERMINATED": "bold magenta",
}
_OBS_STYLE = {"OK": "green", "DENIED": "red", "PERMANENT_ERROR": "red", "UNKNOWN": "yellow"}


def _line(node: str, *parts: tuple[str, str] | str) -> Text:
    text = Text(f"  {short(node, 40):<12} ", style="dim")
    for part in parts:
        if isinstance(part, tuple):
            text.append(part[0], style=part[1])
        else:
            text.append(part)
    return text


def _decision(decision: Mapping[str, Any]) -> tuple[str, str]:
    kind = decision.get("kind")
    if kind in ("tool_call", "request_approval"):
        call = call_text(decision.get("tool_name"), decision.get("arguments"))
        line = f"→ {short(decision.get('call_id') or '', 40)} {call}"
        if kind == "request_approval":  # the model asked a person first, and why
            line += f" (asks a person first: {short(decision.get('content') or '', 100)})"
        return line, "cyan"
    content = short(decision.get("content") or decision.get("reason_code") or "", 100)
    styles = {"finish": "bold", "abort": "red", "ask_user": "yellow"}
    return f"{short(kind, 40)}: {content}", styles.get(str(kind), "")


def _cancelled_before_running(result: Mapping[str, Any]) -> bool:
    """A call turned down because the run was cancelled, not by a person's judgement."""
    error = result.get("error") or {}
    return error.get("type") == "ApprovalRejected" and str(error.get("message", "")).endswith(
        CANCELLED
    )


def _result(result: Mapping[str, Any]) -> list[tuple[str, str] | str]:
    status = str(result.get("status"))
    outcome = str(result.get("outcome"))
    if _cancelled_before_running(result):
        return [
            ("✗ ", STATUS_STYLE["CANCELLED"]),
            f"{short(result.get('call_id'), 40)} {short(result.get('tool_name'), 80)} ",
            (f"not run — {CANCELLED}", STATUS_STYLE["CANCELLED"]),
        ]
    parts: list[tuple[str, str] | str] = [
        (f"{'✓' if status == 'OK' else '✗'} ", _OBS_STYLE.get(status, "yellow")),
        f"{short(result.get('call_id'), 40)} {short(result.get('tool_name'), 80)} ",
        (short(f"{status}/{outcome}", 60), _OBS_STYLE.get(status, "yellow")),
    ]
    effect = result.get("side_effect") or {}
    error = result.get("error") or {}
    if error:
        phase = short(error.get("phase"), 20)
        parts.append((f" — {phase}: {short(error.get('message', ''), 100)}", "red"))
    elif effect.get("summary"):
        parts.append(f" — {short(effect['summary'], 80)}")
    return parts


def raised_text(payload: Mapping[str, Any]) -> str:
    """A ``tool.raised`` event for the developer: where, type and message, then the
    traceback (already bounded by the executor), all as plain text."""
    head = f"{payload.get('stage')}: {payload.get('type')}: {payload.get('message', '')}"
    trace = str(payload.get("traceback") or "").rstrip()
    return inert(f"{head}\n{trace}" if trace else head, lines=True)


def progress_lines(node: str, update: Mapping[str, Any] | None) -> list[Text]:
    """The live lines for one node update (empty for bookkeeping-only updates)."""
    if node == "__interrupt__" and isinstance(update, Sequence):
        waiting = [getattr(item, "value", item) for item in update]
        return [_line("waiting", ("waiting for ", "yellow"), interrupt_summary(v)) for v in waiting]
    if not isinstance(update, Mapping):
        return []
    lines: list[Text] = []
    if update.get("contract"):
        contract = update["contract"]
        budgets = short(
            ", ".join(f"{k} {v:g}" for k, v in (contract.get("budgets") or {}).items()), 300
        )
        checks = len(contract.get("success_checks") or [])
        lines.append(_line(node, ("admitted", "green"), f": {checks} checks; budgets {budgets}"))
    if update.get("phase"):
        lines.append(_line(node, ("phase → ", "dim"), (short(update["phase"], 60), "bold")))
    plan = update.get("plan")
    if isinstance(plan, Mapping) and plan.get("steps") is not None:
        steps = short(", ".join(str(s.get("id")) for s in plan["steps"]), 300)
        version = short(plan.get("version"), 20)
        lines.append(_line(node, (f"plan v{version}", "bold"), f": {steps}"))
    turn = update.get("turn")
    for decision in update.get("decisions") or []:
        text, style = _decision(decision)
        lines.append(_line(node, (f"turn {turn} ", "bold") if turn else "", (text, style)))
    for result in (update.get("results") or {}).values():
        lines.append(_line(node, *_result(result)))
    for note in update.get("feedback") or []:
        style = "yellow" if "rejected" in str(note.get("text")) else "dim"
        lines.append(_line(node, (short(note.get("text", ""), 160), style)))
    verification = update.get("verification")
    if isinstance(verification, Mapping) and verification.get("accepted"):
        passed = len(verification.get("passed") or [])
        lines.append(_line(node, ("verified", "green"), f": {passed} checks passed"))
    status = update.get("status")
    if status and status not in ("RUNNING", "WAITING"):
        shown = (short(status, 40), STATUS_STYLE.get(str(status), ""))
        lines.append(_line(node, ("status ", "dim"), shown))
    error = update.get("error")
    if isinstance(error, Mapping) and error.get("message"):
        lines.append(_line(node, (short(error["message"], 160), "red")))
    return lines


# --------------------------------------------------------------------------- final


_HASHES = re.compile(r"\b([0-9a-f]{12})[0-9a-f]{52}\b")


def _value(value: Any) -> str:
    """An evidence value on one line; sha256 digests shortened to 12 hex digits."""
    return short(_HASHES.sub(r"\1…", str(value)), 60)


def evidence_table(evidence: Mapping[str, Mapping[str, Any]]) -> Table:
    """Evidence: source, kind, value, verified."""
    table = Table(title="Evidence", title_justify="left", expand=False)
    table.add_column("source", overflow="fold")
    table.add_column("kind")
    table.add_column("value", overflow="fold", max_width=60)
    table.add_column("verified", justify="center")
    for key, item in evidence.items():
        table.add_row(
            Text(short(item.get("source_id", key), 200)),
            Text(short(item.get("kind", ""), 40)),
            Text(_value(item.get("value", ""))),
            Text("✓", style="green") if item.get("verified") else Text("–", style="dim"),
        )
    return table


def budget_table(budget: Mapping[str, Any] | None, limits: Mapping[str, Any] | None) -> Table:
    """Budget use per kind against the contract's limit.

    Under a cost row, the model calls priced at 0 for want of a price: the cost shown
    leaves them out, and the table says so.
    """
    used = dict((budget or {}).get("used") or {})
    limits = dict(limits or {})
    table = Table(title="Budget", title_justify="left")
    table.add_column("kind")
    table.add_column("used", justify="right")
    table.add_column("limit", justify="right")
    for kind in [k.value for k in BudgetKind]:
        if kind not in used and kind not in limits:
            continue
        spent, limit = used.get(kind, 0), limits.get(kind)
        over = limit is not None and spent >= limit
        table.add_row(
            kind,
            Text(f"{spent:g}", style="red" if over else ""),
            f"{limit:g}" if limit is not None else "–",
        )
        unpriced = used.get("unpriced_model_calls", 0)
        if kind == BudgetKind.COST_USD.value and unpriced:
            table.add_row("  model calls without a price", Text(f"{unpriced:g}", "yellow"), "–")
    return table


def report_files(values: Mapping[str, Any], workspace: Path | None) -> list[Path]:
    """Files the run wrote or published that exist in the workspace (if it is here)."""
    if workspace is None:
        return []
    names: list[str] = []
    for result in (values.get("results") or {}).values():
        data = result.get("data")
        if result.get("status") == "OK" and isinstance(data, Mapping):
            for key in ("path", "published"):
                if isinstance(data.get(key), str) and data[key] not in names:
                    names.append(data[key])
    paths = [workspace / name for name in names]
    return [p for p in paths if p.is_file()]


def render_final(console: Console, values: Mapping[str, Any], workspace: Path | None) -> None:
    """Final status, output, evidence, budget and report files."""
    status = short(values.get("status") or "UNKNOWN", 40)
    console.print()
    console.print(Text("status: ", style="bold") + Text(status, STATUS_STYLE.get(status, "")))
    if values.get("output"):
        console.print(Text("output:", style="bold"))
        console.print(Text(inert(str(values["output"]), lines=True)), soft_wrap=True)
    error = values.get("error")
    message = inert(str(error.get("message")), lines=True) if isinstance(error, Mapping) else ""
    if message and status == "CANCELLED":
        console.print(Text(f"why: {message}", STATUS_STYLE[status]), soft_wrap=True)
    elif message and status != "COMPLETED":
        console.print(Text(f"error: {message}", style="red"), soft_wrap=True)
    output = str(values.get("output") or "")
    failed = [item for item in values.get("open_items") or [] if str(item) not in output]
    if failed and status != "COMPLETED":
        console.print(Text("open checks:", style="bold"))
        for item in failed:
            console.print(Text(f"  - {short(item, 300)}", style="yellow"), soft_wrap=True)
    if values.get("evidence"):
        console.print(evidence_table(values["evidence"]))
    limits = (values.get("contract") or {}).get("budgets")
    table = budget_table(values.get("budget"), limits)
    if table.row_count:
        console.print(table)
    for path in report_files(values, workspace):
        shown = Text(inert(str(path)))
        console.print(Text("report file: ", style="bold") + shown, soft_wrap=True)


# --------------------------------------------------------------------------- runs, waits


def runs_table(rows: Iterable[Sequence[str]]) -> Table:
    """The ``runs`` listing: id, arch, model, created, status."""
    table = Table(title="Runs", title_justify="left")
    for name in ("run id", "arch", "model", "created", "status"):
        table.add_column(name, overflow="fold")
    for run_id, arch, model, created, status in rows:
        shown = short(status, 80)
        table.add_row(
            Text(short(run_id, 200)),
            Text(short(arch, 40)),
            Text(short(model, 80)),
            Text(short(created, 40)),
            Text(shown, STATUS_STYLE.get(shown, "")),
        )
    return table


def render_waiting(
    console: Console, run_id: str, items: Sequence[Mapping[str, Any]], suffix: str = ""
) -> None:
    """A run paused on interrupts (``{"id", "value"}``, a tool's own question with its
    ``wait``): what waits and until when, and the exact commands that continue it."""
    values = [item.get("value") for item in items]
    console.print()
    console.print(Text("status: ", style="bold") + Text("WAITING", STATUS_STYLE["WAITING"]))
    console.print(Text(f"run id: {short(run_id, 200)}"))
    console.print(Text("waiting for:", style="bold"))
    for item, value in zip(items, values, strict=True):
        reason = value.get("reason") if isinstance(value, Mapping) else None
        line = f"  - {wait_summary(item, suffix)}"
        line += f" — {short(reason, 300)}" if reason else ""
        console.print(Text(line, style="yellow"), soft_wrap=True)
    console.print(Text("continue with:", style="bold"))
    for command in follow_ups(run_id, values, suffix):
        console.print(Text(f"  {command}", style="cyan"), soft_wrap=True)


def render_status(console: Console, view: RunView, flags: str = "") -> None:
    """``execgraph status``: status (and who drives it), output, waits, budget.

    A run started from Python (no spec) is continued by the graph that started it: that
    is said instead of the command line's follow-ups.
    """
    from execgraph.engines.embedded.foreign import continue_in_python

    spec = view.spec
    about = f"· arch {short(spec.arch, 40)} · model {short(spec.model, 80)}" if spec else ""
    about = about or "· started from Python"
    console.print(Text(f"run {short(view.run_id, 200)}", style="bold"), about, soft_wrap=True)
    current = short(view.status, 40)
    line = Text("status: ", style="bold") + Text(current, STATUS_STYLE.get(current, ""))
    if current == "RUNNING" and spec is not None and view.values is not None:
        resume = f"execgraph resume {short(view.run_id, 200)}{flags}"
        driver = view.driver
        line += Text(
            f" (process {driver})" if driver else f" (no process; continue with: {resume})"
        )
    console.print(line, soft_wrap=True)
    if view.advances:
        console.print(Text(f"advances: {view.advances}", style="dim"))
    if view.output:
        console.print(Text("output: ", style="bold") + Text(short(view.output, 300)))
    if view.error and current not in ("COMPLETED", "RUNNING", "WAITING"):
        console.print(Text(f"error: {short(view.error, 300)}", style="red"), soft_wrap=True)
    waiting = [item["value"] for item in view.interrupts]
    for item in view.interrupts:
        shown = f"  waiting for {wait_summary(item, flags)}"
        console.print(Text(shown, style="yellow"), soft_wrap=True)
    hints = follow_ups(view.run_id, waiting, flags) if waiting else []
    if spec is None:
        hints = [continue_in_python(view.run_id)] if current in ("RUNNING", "WAITING") else []
    for hint in hints:
        console.print(Text(f"  {inert(hint)}", style="cyan"), soft_wrap=True)
    values = view.values or {}
    for stopped in partial_lines(values.get("results") or {}):
        console.print(Text(stopped, style=STATUS_STYLE["PARTIAL"]), soft_wrap=True)
    table = budget_table(values.get("budget"), (values.get("contract") or {}).get("budgets"))
    if table.row_count:
        console.print(table)


def partial_lines(results: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per call that stopped midway: what is written, what is pending, and the
    recovery reference to finish or undo it from (all inert: they are a tool's words)."""
    lines = []
    for result in results.values():
        partial = result.get("partial") or {}
        if not partial:
            continue
        ref = (partial.get("recovery_ref") or {}).get("ref") or "none"
        call = f"{short(result.get('call_id'), 40)} {short(result.get('tool_name'), 60)}"
        lines.append(
            inert(
                f"  partial: {call} — {len(partial.get('committed') or [])} committed, "
                f"{len(partial.get('pending') or [])} pending; recovery: {short(ref, 200)}"
            )
        )
    return lines


def replay_table(report: Any) -> Table:
    """A replay's verdict: statuses, calls, model calls and replayed effects, and the diff."""
    title = f"Replay of {short(report.run_id, 200)}"
    table = Table(title=title, title_justify="left", show_header=False)
    table.add_column("what")
    table.add_column("value", overflow="fold")
    table.add_row("recorded status", short(report.recorded_status, 40))
    table.add_row("replayed status", short(report.replayed_status, 40))
    table.add_row(
        "tool calls",
        f"{len(report.recorded_calls)} recorded, {len(report.replayed_calls)} replayed",
    )
    table.add_row(
        "model calls",
        f"{report.model_calls} made, {report.replies_used} answered from the recording "
        f"({report.recorded_model_calls} recorded)",
    )
    changed = report.workspace_changes
    table.add_row(
        "effects",
        f"{report.effects_replayed} answered from the recording; workspace copy: "
        + (
            inert(f"{len(changed)} file(s) changed: {', '.join(changed)}")
            if changed
            else "unchanged"
        ),
    )
    if report.store:
        table.add_row("read from", short(report.store, 60))
    verdict = "same trajectory" if report.same else inert("\n".join(report.diff), lines=True)
    table.add_row("divergence", Text(verdict, style="green" if report.same else "red"))
    return table
