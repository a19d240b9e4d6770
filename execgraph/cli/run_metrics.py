"""``execgraph metrics RUN_ID`` and ``execgraph diagnose RUN_ID``: one run, from its log.

Both read the run's trace (events, evidence, final state) through the command's engine —
a home's SQLite files, ``--database postgresql://...``, or a Temporal worker — and
compute exactly what ``execgraph eval`` computes per run (:mod:`execgraph.eval.metrics`,
:mod:`execgraph.eval.diagnose`); neither drives the run or calls a model. A single run has
no acceptance checker of its own: it counts as accepted only when it ended COMPLETED on a
verifier's accepting verdict, and is otherwise unjudged (a suite's checker is known only
under ``execgraph eval``).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from execgraph.cli.inert import short
from execgraph.cli.options import (
    DEFAULT_ADDRESS,
    DEFAULT_NAMESPACE,
    DEFAULT_TASK_QUEUE,
    AddressOpt,
    DatabaseOpt,
    EngineOpt,
    HomeOpt,
    NamespaceOpt,
    RunIdArg,
    TaskQueueOpt,
    handled,
)
from execgraph.cli.reach import Target
from execgraph.state.errors import CliError

if TYPE_CHECKING:
    from rich.table import Table

    from execgraph.eval.diagnose import Diagnosis
    from execgraph.eval.metrics import RunMetrics

__all__ = ["COMMANDS", "diagnose_command", "metrics"]

JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
PricesOpt = Annotated[
    Path | None,
    typer.Option(
        "--prices",
        help='JSON price table to cost model replies: {"model": {"input_per_mtok": 0.15, '
        '"output_per_mtok": 0.6}} (the log holds token usage, not prices).',
    ),
]

_UNJUDGED = (
    "acceptance: not judged here (the run did not end COMPLETED on an accepting verdict); "
    "acceptance by a suite's own checker is only known under `execgraph eval`"
)
_BY_VERIFIER = (
    "acceptance: the verifier accepted the result (a suite's own checker, independent of "
    "the verifier, is only known under `execgraph eval`)"
)


def _prices(path: Path | None) -> dict[str, dict[str, float]]:
    from execgraph.nodes.model.prices import price_table

    if path is None:
        return {}
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CliError(f"--prices {str(path)!r} is not a readable JSON file ({exc})") from None
    if not isinstance(raw, dict):
        raise CliError(f"--prices {str(path)!r} must hold an object of model prices")
    return price_table(raw)


def _accepted(status: str | None, values: dict[str, Any]) -> bool | None:
    """True when the run ended COMPLETED on an accepting verdict; else not judged."""
    verdict = values.get("verification") or {}
    return True if status == "COMPLETED" and verdict.get("accepted") is True else None


def _number(value: float) -> Any:
    if math.isnan(value):
        return None
    return value if math.isfinite(value) else "inf"


def _rate(value: float) -> str:
    return "n/a (nothing to divide)" if math.isnan(value) else f"{value:.1%}"


def metrics_table(m: RunMetrics) -> Table:
    """One run's section 15 metrics, each with the counts behind it."""
    from rich.table import Table

    from execgraph.eval.metrics import aggregate

    rates = aggregate([m])
    title = f"metrics of run {short(m.run_id, 200)} ({short(m.status or 'not ended', 40)})"
    table = Table(title=Text(title))
    for column in ("metric", "value", "from the event log"):
        table.add_column(column)
    seconds = "n/a (not ended)" if math.isnan(m.latency_s) else f"{m.latency_s:.3f} s"
    cost = rates["cost_per_success_usd"]
    rows = [
        ("legal action rate", _rate(rates["legal_action_rate"]),
         f"{m.legal_candidates} legal of {m.candidates} candidates"),
        ("tool call success rate", _rate(rates["tool_success_rate"]),
         f"{m.tool_calls_succeeded} succeeded of {m.tool_calls} dispatched"),
        ("ineffective-loop ratio", _rate(rates["ineffective_loop_ratio"]),
         f"{m.ineffective_decisions} without progress of {m.decisions} decisions"),
        ("unauthorized executions", str(m.unauthorized_executions),
         "tool.started with no allow standing"),
        ("accepted", {True: "yes (verifier)", False: "no", None: "not judged"}[m.accepted],
         "the verifier's verdict; a suite's checker only under execgraph eval"),
        ("cost", f"${m.cost_usd:.6f}",
         f"model ${m.model_cost_usd:.6f} ({m.unpriced_model_calls} unpriced) + "
         f"tools ${m.tool_cost_usd:.6f}"),
        ("cost per success", "n/a (not judged)" if math.isnan(cost) else f"${cost:.6f}",
         "every run's cost / accepted runs"),
        ("tokens", f"{m.input_tokens} in / {m.output_tokens} out",
         f"{m.model_calls} model calls; "
         f"{rates['input_tokens_per_decision']:.1f} input tokens per decision"),
        ("latency", seconds, "run.admitted -> terminal event, approval waits included"),
        ("approval wait", f"{m.approval_wait_s:.3f} s", "approval.requested -> resolved"),
        ("other waits", f"{m.wait_s:.3f} s", "questions and events: run.wait_started -> ended"),
        ("approvals expired", f"{m.approvals_expired} of {m.approvals}",
         "answers that came after the request's expires_at"),
        ("tool recovery", _rate(rates["tool_recovery_rate"]),
         f"{m.actions_recovered} recovered of {m.actions_failed} failed actions"),
        ("decision errors", _rate(rates["decision_error_rate"]),
         ", ".join(f"{k.replace('_', ' ')} {n}" for k, n in m.decision_errors.items())
         + f" of {m.decisions} decisions"),
    ]  # fmt: skip
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def diagnosis_table(d: Diagnosis) -> Table:
    """Each finding: the layer to look at, the symptom, the events that show it, advice."""
    from rich.table import Table

    table = Table(title=Text(f"diagnosis of run {short(d.run_id, 200)}"))
    for column in ("layer", "symptom", "events", "look at"):
        table.add_column(column)
    for f in d.findings:
        shown = ", ".join(f.evidence[:3]) + (
            f" (+{len(f.evidence) - 3})" if len(f.evidence) > 3 else ""
        )
        cells = (f.layer, f.symptom, shown, f.advice)
        table.add_row(*(Text(short(cell, 400)) for cell in cells))
    return table


def errors_table(d: Diagnosis) -> Table:
    """The run's decision errors, classified from its log: class, event, why."""
    from rich.table import Table

    table = Table(title=Text(f"decision errors of run {short(d.run_id, 200)}"))
    for column in ("class", "event", "why"):
        table.add_column(column)
    for e in d.decision_errors:
        cells = (e.kind.replace("_", " "), e.event_id, e.why)
        table.add_row(*(Text(short(cell, 400)) for cell in cells))
    return table


@handled
def metrics(
    run_id: RunIdArg,
    home: HomeOpt = None,
    json_: JsonOpt = False,
    prices: PricesOpt = None,
    database: DatabaseOpt = None,
    engine: EngineOpt = "embedded",
    address: AddressOpt = DEFAULT_ADDRESS,
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
) -> int:
    """Compute a run's layered metrics (model, tools, control, outcome) from its event log."""
    from rich.text import Text

    from execgraph.cli.drive import out
    from execgraph.eval.metrics import aggregate, run_metrics

    runs = Target(engine, home, database, address, task_queue, namespace).runs()
    table = _prices(prices)
    got = runs.trace(run_id)
    m = run_metrics(
        got.events,
        accepted=_accepted(got.values.get("status"), got.values),
        prices=table,
        tool_costs=got.tool_costs,
    )
    if json_:
        payload = {
            "run_id": m.run_id,
            "accepted_by": "verifier" if m.accepted else None,
            "counts": {k: _number(v) if isinstance(v, float) else v for k, v in asdict(m).items()},
            "metrics": {k: _number(v) for k, v in aggregate([m]).items()},
        }
        out.print_json(json.dumps(payload))
        return 0
    out.print(metrics_table(m))
    out.print(Text(_BY_VERIFIER if m.accepted else _UNJUDGED, style="dim"), soft_wrap=True)
    return 0


@handled
def diagnose_command(
    run_id: RunIdArg,
    home: HomeOpt = None,
    json_: JsonOpt = False,
    database: DatabaseOpt = None,
    engine: EngineOpt = "embedded",
    address: AddressOpt = DEFAULT_ADDRESS,
    task_queue: TaskQueueOpt = DEFAULT_TASK_QUEUE,
    namespace: NamespaceOpt = DEFAULT_NAMESPACE,
) -> int:
    """Walk the symptom table over one run and say which layer to look at first."""
    from rich.text import Text

    from execgraph.cli.drive import out
    from execgraph.eval.diagnose import diagnose

    got = Target(engine, home, database, address, task_queue, namespace).runs().trace(run_id)
    values = got.values
    d = diagnose(
        got.events,
        accepted=_accepted(values.get("status"), values),
        observed_evidence=got.evidence,
        final_evidence=values.get("evidence") if values else None,
    )
    if json_:
        payload = {
            "run_id": d.run_id,
            "first_layer": d.first_layer,
            "findings": [asdict(f) for f in d.findings],
            "decision_errors": [asdict(e) for e in d.decision_errors],
        }
        out.print_json(json.dumps(payload))
        return 0
    if not got.events:
        out.print(Text(f"run {short(run_id, 200)} has no events yet"))
        return 0
    if not d.findings and not d.decision_errors:
        out.print(Text(f"run {short(run_id, 200)}: no symptom of the symptom table found"))
        return 0
    out.print(diagnosis_table(d))
    if d.decision_errors:
        out.print(errors_table(d))
    out.print(Text(f"look first at: {short(d.first_layer, 100)}", style="bold"))
    return 0


diagnose_command.__name__ = "diagnose"  # the command's name (``diagnose`` is the function's)

COMMANDS = (metrics, diagnose_command)
"""In the order ``execgraph --help`` lists them."""
