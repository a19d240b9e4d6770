"""Every section 15 formula on hand-built logs (numbers worked out by hand), then on real runs.

The hand-built logs use the runtime's own event constructor (``make_event``) and payload
shapes; the real runs (the demo, fault-matrix cells) cross-check the counts against what
the runtime itself charged in ``budget["used"]``.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pytest

from execgraph.eval.intervals import Estimate, estimate, t_quantile
from execgraph.eval.metrics import (
    METRIC_KEYS,
    RunMetrics,
    aggregate,
    declared_costs,
    load_events,
    run_metrics,
)
from execgraph.state.events import EventType
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.tools.adapters.fake import FakeAdapter
from tests.support.metrics_runs import DEMO_PRICES, Log, demo_run, matrix_log

# ------------------------------------------------------------------ legal action rate


def test_legal_action_rate_counts_refused_replies_and_the_models_own_refusals() -> None:
    log = Log()
    log.admitted()
    log.reply(1, refused="not valid JSON", calls=2)  # 2 illegal candidates, no decision
    log.reply(1, seq=2)
    log.call(1, "nosuch", {}, gate="invalid:UnknownToolError")  # illegal
    log.call(1, "lookup", {"item": 1}, index=1, gate="invalid:SchemaViolation")  # illegal
    log.call(1, "send", {}, index=2, gate="denied:send is not allowed here (task contract)")
    log.call(1, "save", {}, index=3, gate="denied:policy denies save: frozen")  # legal
    log.call(1, "save", {"x": 1}, index=4, gate="invalid:StateGuardMismatch")  # the world's
    log.call(1, "lookup", {"item": "a"}, index=5)  # legal, ran
    log.reply(2)
    log.control(2, "finish")  # legal
    m = run_metrics(log.events)
    assert (m.candidates, m.legal_candidates, m.decisions) == (9, 4, 7)
    assert aggregate([m])["legal_action_rate"] == pytest.approx(4 / 9)


# ------------------------------------------------------------------ tool call success


def test_tool_success_rate_is_over_dispatched_calls_only() -> None:
    log = Log()
    log.call(1, "lookup", {"item": "a"})  # succeeded
    log.call(1, "lookup", {"item": "b"}, index=1, outcome="failed")
    log.call(1, "save", {"item": "a"}, index=2, outcome="unknown")
    log.call(1, "save", {"item": "b"}, index=3, gate="denied:policy denies save")  # refused
    log.call(1, "save", {"item": "c"}, index=4, started=False, outcome="failed")  # twin refused
    m = run_metrics(log.events)
    assert (m.tool_calls, m.tool_calls_succeeded) == (3, 1)
    assert aggregate([m])["tool_success_rate"] == pytest.approx(1 / 3)


# ------------------------------------------------------------------ progress


def test_repeats_and_refusals_make_no_progress_a_retry_that_works_does() -> None:
    log = Log()
    log.call(1, "lookup", {"item": "a"})  # new: progress
    log.call(2, "lookup", {"item": "a"})  # repeat of a success: none
    log.call(3, "lookup", {"item": "b"}, outcome="failed")  # new (it failed): progress
    log.call(4, "lookup", {"item": "b"})  # first success of b: progress
    log.call(5, "lookup", {"item": "b"})  # repeat of a success: none
    log.call(6, "lookup", {"item": "c"}, outcome="failed")  # new: progress
    log.call(7, "lookup", {"item": "c"}, outcome="failed")  # failed again: none
    log.call(8, "save", {"item": "a"}, gate="denied:policy denies save")  # refused: none
    log.control(9, "finish", "early")
    log.verdict(9, accepted=False)  # a rejected finish: none
    log.control(10, "ask_user", "which item?")  # progress
    log.control(11, "ask_user", "which item?")  # word-for-word repeat: none
    log.control(12, "finish", "done")
    log.verdict(12, accepted=True)  # accepted: progress
    m = run_metrics(log.events)
    assert (m.decisions, m.ineffective_decisions) == (12, 6)
    assert aggregate([m])["ineffective_loop_ratio"] == pytest.approx(0.5)


def test_a_finish_the_gate_never_judged_ends_the_run_and_counts_as_progress() -> None:
    log = Log()
    log.control(1, "finish", "done")
    log.verdict(1, accepted=False, gated=False)  # the verifier_gate=False ablation's record
    assert run_metrics(log.events).ineffective_decisions == 0


def test_a_hybrid_phase_close_is_progress_even_in_the_same_words() -> None:
    log = Log()
    log.control(1, "finish", "collected")  # no verdict: a phase closes
    log.control(2, "finish", "collected")
    log.control(3, "abort", "stuck")
    log.control(4, "abort", "stuck")  # a word-for-word repeat of a control: none
    m = run_metrics(log.events)
    assert (m.decisions, m.ineffective_decisions) == (4, 1)


def test_a_plan_step_is_a_decision_and_a_candidate() -> None:
    log = Log()
    log.reply(1)  # the planner's one reply: its steps are the decisions
    log.call(1, "lookup", {"item": "a"}, decided=False)
    log.call(1, "lookup", {"item": "nope"}, index=1, decided=False, gate="invalid:DomainViolation")
    m = run_metrics(log.events)
    assert (m.candidates, m.legal_candidates, m.decisions, m.ineffective_decisions) == (2, 1, 2, 1)


# ------------------------------------------------------------------ unauthorized executions


def test_the_unauthorized_counter_counts_a_start_with_no_allow_standing() -> None:
    log = Log()
    log.call(1, "lookup", {"item": "a"})  # allowed by policy: fine
    waiting = log.call(1, "publish", {}, index=1, gate="require_approval", started=False)
    log.add(EventType.APPROVAL_REQUESTED, call_id=waiting, seq=0, payload={})
    log.add(EventType.APPROVAL_RESOLVED, call_id=waiting, seq=0, payload={"action": "approve"})
    log.start(waiting, 1, 1, "publish", attempt="a1")  # approved: fine
    # hybrid's fixed gate: the approval is logged before the executor's events
    log.add(
        EventType.APPROVAL_RESOLVED, call_id="t2.c0", seq="gate-0", payload={"action": "approve"}
    )
    log.call(2, "publish", {"v": 2})
    assert run_metrics(log.events).unauthorized_executions == 0

    log.call(3, "publish", {"v": 3}, gate="require_approval")  # started, never approved
    rejected = log.call(4, "publish", {"v": 4}, gate="require_approval", started=False)
    log.add(EventType.APPROVAL_RESOLVED, call_id=rejected, seq=0, payload={"action": "reject"})
    log.start(rejected, 4, 0, "publish", attempt="a1")  # ran after a rejection
    assert run_metrics(log.events).unauthorized_executions == 2


@pytest.mark.parametrize(
    ("fault", "illegal"),
    [("unknown_tool", 1), ("schema_violation", 1), ("prompt_injection", 1), ("illegal_output", 3)],
)
def test_real_refusals_of_the_models_errors_are_illegal_candidates(
    tmp_path: Path, fault: str, illegal: int
) -> None:
    # prompt_injection: the model calls send_email, which the task does not offer
    m = run_metrics(matrix_log(tmp_path, fault).events)
    assert m.candidates - m.legal_candidates == illegal


def test_unauthorized_executions_are_zero_on_the_real_fault_matrix(tmp_path: Path) -> None:
    for fault in ("permission_denied", "prompt_injection", "write_lost_no_probe"):
        recorded = matrix_log(tmp_path / fault, fault)
        assert run_metrics(recorded.events).unauthorized_executions == 0, fault


# ------------------------------------------------------------------ cost


def test_cost_prices_usage_and_charges_declared_tool_cost_per_attempt() -> None:
    log = Log()
    log.reply(1, 1000, 100, model="m")
    log.reply(2, 2000, 50, model="m-2024-07-18")  # a dated snapshot: priced as "m"
    log.reply(3, 500, 5, model="unknown")  # no price: 0, counted
    log.call(1, "search", {"q": 1}, retries=2)  # 3 adapter attempts
    log.call(2, "search", {"q": 2}, gate="denied:policy denies search")  # refused: free
    log.call(3, "lookup", {"item": "a"})
    prices = {"m": {"input_per_mtok": 2.0, "output_per_mtok": 10.0}}
    costs = {"search@1.0.0": 0.01, "lookup": 0.5}  # by name@version or by name
    m = run_metrics(log.events, prices=prices, tool_costs=costs)
    assert m.model_cost_usd == pytest.approx((3000 * 2.0 + 150 * 10.0) / 1e6)
    assert m.unpriced_model_calls == 1
    assert m.tool_cost_usd == pytest.approx(0.01 * 3 + 0.5)
    assert (m.input_tokens, m.output_tokens, m.model_calls) == (3500, 155, 3)
    assert m.cost_usd == pytest.approx(m.model_cost_usd + m.tool_cost_usd)


def test_declared_costs_reads_what_tools_declare() -> None:
    fake = FakeAdapter()
    fake.tool("lookup", effect="read")
    assert declared_costs(fake.tools()) == {"lookup@1.0.0": 0.0}


# ------------------------------------------------------------------ latency


def test_latency_runs_from_admission_to_the_end_and_approval_waits_are_summed() -> None:
    log = Log()
    log.admitted(ts=100.0)
    asked = log.call(1, "publish", {}, gate="require_approval", started=False)
    log.add(EventType.APPROVAL_REQUESTED, ts=110.0, call_id=asked, seq=0, payload={})
    log.add(
        EventType.APPROVAL_RESOLVED, ts=150.0, call_id=asked, seq=0, payload={"action": "approve"}
    )
    log.control(2, "answer", "x")
    log.add(EventType.DECISION_RECORDED, ts=160.0, turn_id="t3", decision_id="t3.d0",
            payload={"decision_id": "t3.d0", "kind": "tool_call", "call_id": "t3.c0"})  # fmt: skip
    log.add(
        EventType.APPROVAL_RESOLVED,
        ts=170.0,
        call_id="t3.c0",
        seq="gate-0",
        payload={"action": "approve"},
    )  # fmt: skip  (hybrid: no request logged)
    log.add(EventType.TOOL_REQUESTED, call_id="t3.c0", decision_id="t3.d0", payload={"tool": "p"})
    unfinished = run_metrics(log.events)
    assert math.isnan(unfinished.latency_s)  # not ended: no latency yet
    log.finished(ts=200.0)
    m = run_metrics(log.events)
    assert m.latency_s == pytest.approx(100.0)
    assert m.approval_wait_s == pytest.approx(40.0 + 10.0)
    assert m.reported_completed and m.status == "COMPLETED"


# ------------------------------------------------------------------ aggregate


def _run(**kw: object) -> RunMetrics:
    base: dict[str, object] = {
        "run_id": "r", "status": "COMPLETED", "candidates": 0, "legal_candidates": 0,
        "tool_calls": 0, "tool_calls_succeeded": 0, "decisions": 0, "ineffective_decisions": 0,
        "unauthorized_executions": 0, "accepted": None, "fault": None, "recovered": None,
        "model_cost_usd": 0.0, "tool_cost_usd": 0.0, "input_tokens": 0, "output_tokens": 0,
        "model_calls": 0, "latency_s": math.nan, "approval_wait_s": 0.0,
        "reported_completed": True,
    }  # fmt: skip
    return RunMetrics(**{**base, **kw})  # type: ignore[arg-type]


def test_aggregate_pools_counts_and_divides_as_documented() -> None:
    a = _run(candidates=4, legal_candidates=3, tool_calls=2, tool_calls_succeeded=2,
             decisions=4, ineffective_decisions=1, accepted=True, fault="read_timeout",
             recovered=True, model_cost_usd=0.3, tool_cost_usd=0.1, input_tokens=400,
             latency_s=2.0, approval_wait_s=1.0)  # fmt: skip
    b = _run(candidates=6, legal_candidates=6, tool_calls=3, tool_calls_succeeded=1,
             decisions=6, ineffective_decisions=4, accepted=False, fault="write_lost",
             recovered=False, model_cost_usd=0.5, input_tokens=600, latency_s=4.0,
             unauthorized_executions=1)  # fmt: skip
    c = _run(status="FAILED", reported_completed=False, accepted=False, model_cost_usd=0.2)
    got = aggregate([a, b, c])
    assert list(got) == list(METRIC_KEYS)
    assert got["legal_action_rate"] == pytest.approx(9 / 10)
    assert got["tool_success_rate"] == pytest.approx(3 / 5)
    assert got["ineffective_loop_ratio"] == pytest.approx(5 / 10)
    assert got["recovery_rate"] == pytest.approx(1 / 2)  # c had no fault
    assert got["unauthorized_executions"] == 1.0
    assert got["acceptance_rate"] == pytest.approx(1 / 3)
    assert got["cost_per_success_usd"] == pytest.approx((0.4 + 0.5 + 0.2) / 1)  # failures count
    assert got["latency_s"] == pytest.approx(3.0)  # c never ended: left out of the mean
    assert got["approval_wait_s"] == pytest.approx(1.0 / 2)  # over the same runs as latency
    assert got["completed_but_failed_rate"] == pytest.approx(1 / 3)  # b: COMPLETED, rejected
    assert got["input_tokens_per_decision"] == pytest.approx(1000 / 10)


def test_empty_denominators_are_nan_and_no_success_costs_infinity() -> None:
    empty = aggregate([])
    assert empty["unauthorized_executions"] == 0.0
    assert all(math.isnan(v) for k, v in empty.items() if k != "unauthorized_executions")
    unjudged = aggregate([_run(model_cost_usd=1.0)])
    assert math.isnan(unjudged["acceptance_rate"]) and math.isnan(unjudged["cost_per_success_usd"])
    assert math.isnan(unjudged["recovery_rate"]) and math.isnan(unjudged["tool_success_rate"])
    failed = aggregate([_run(accepted=False, model_cost_usd=1.0)])
    assert failed["cost_per_success_usd"] == math.inf and failed["acceptance_rate"] == 0.0


# ------------------------------------------------------------------ estimate


def test_estimate_is_the_student_t_interval_worked_by_hand() -> None:
    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    s = math.sqrt(sum((v - 3.0) ** 2 for v in values) / 4)  # sample sd = sqrt(2.5)
    half = 2.776 * s / math.sqrt(5)  # t(0.975, 4) = 2.776
    assert estimate(values) == pytest.approx(Estimate(3.0, 3.0 - half, 3.0 + half, 5))
    assert estimate([0.5, 0.7]).high == pytest.approx(
        0.6 + 12.706 * statistics.stdev([0.5, 0.7]) / math.sqrt(2)
    )


def test_estimate_edges_one_value_nan_and_infinity() -> None:
    assert estimate([0.25]) == Estimate(0.25, 0.25, 0.25, 1)
    assert estimate([2.0, math.nan, 4.0]).n == 2  # a seed with nothing to divide is left out
    nothing = estimate([math.nan])
    assert nothing.n == 0 and math.isnan(nothing.mean)
    assert estimate([1.0, math.inf]) == Estimate(math.inf, math.inf, math.inf, 2)


def test_estimate_reports_infinite_values_as_such() -> None:
    # A paired difference against a seed with no success (cost per success inf) is -inf.
    assert estimate([0.5, -math.inf]) == Estimate(-math.inf, -math.inf, -math.inf, 2)
    assert estimate([math.inf, 2.0, math.inf]) == Estimate(math.inf, math.inf, math.inf, 3)
    both = estimate([math.inf, 1.0, -math.inf])  # infinities of both signs: no mean
    assert both.n == 3 and all(math.isnan(v) for v in (both.mean, both.low, both.high))


def test_t_quantiles_beyond_the_table_follow_the_known_values() -> None:
    # t(0.975, df) from any statistics table
    assert t_quantile(30) == 2.042
    assert t_quantile(40) == pytest.approx(2.021, abs=1e-3)
    assert t_quantile(120) == pytest.approx(1.980, abs=1e-3)


# ------------------------------------------------------------------ real runs


@pytest.mark.timeout(120)
@pytest.mark.parametrize("arch", ["react", "plan_execute", "hybrid"])
def test_a_real_demo_run_reads_back_what_the_runtime_charged(tmp_path: Path, arch: str) -> None:
    run = demo_run(tmp_path, arch)
    assert run.status == "COMPLETED"
    with SqliteExecutionStore(tmp_path / "exec.db") as store:
        events = load_events(store, "r1")
    m = run_metrics(events, accepted=True, prices=DEMO_PRICES)
    used = run.values["budget"]["used"]
    assert m.model_calls == used["model_calls"]
    assert (m.input_tokens, m.output_tokens) == (used["tokens_in"], used["tokens_out"])
    assert m.model_cost_usd == pytest.approx(used["cost_usd"])
    assert m.tool_calls == used["tool_calls"] == m.tool_calls_succeeded  # none refused
    assert m.unauthorized_executions == 0 and m.unpriced_model_calls == 0
    assert m.legal_candidates == m.candidates >= m.decisions > 0
    assert 0 < m.approval_wait_s <= m.latency_s  # publish waited for a person
    rates = aggregate([m])
    assert rates["acceptance_rate"] == 1.0
    assert rates["cost_per_success_usd"] == pytest.approx(used["cost_usd"])
    # the demo's first finish is rejected (a citation was never read): no progress
    assert m.ineffective_decisions >= 1
