"""The section 16 diagnosis on recorded runs that show each symptom, and on a clean one.

Runs are real: the fault matrix's cells (real graphs, ScriptedChatModel, FakeAdapter, real
SQLite; their own invariants checked), a person's rejection, the demo. Two symptoms
today's runtime does not produce — progress lost after a resume, evidence lost in a merge
— are shown on a real run's record with the loss spliced in, which is what the diagnosis
would read if a checkpointer or a reducer regressed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.eval.diagnose import LAYERS, Diagnosis, diagnose
from execgraph.graph import build_graph
from execgraph.state.events import EventType, make_event
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools.adapters.fake import FakeAdapter
from tests.reliability.replies import lookup
from tests.reliability.scenarios import Cell
from tests.support.metrics_runs import Log, approval_run, clean_cell, demo_run, matrix_log


def _symptoms(d: Diagnosis) -> dict[str, str]:
    return {f.layer: f.symptom for f in d.findings}


def _only(d: Diagnosis, layer: str) -> tuple[str, ...]:
    [finding] = [f for f in d.findings if f.layer == layer]
    return finding.evidence


@pytest.mark.parametrize("arch", ["react", "workflow"])
def test_a_clean_run_has_no_findings(tmp_path: Path, arch: str) -> None:
    run = matrix_log(tmp_path, "clean", cell=clean_cell(arch))
    assert run.status == "COMPLETED"
    d = diagnose(run.events, accepted=True)
    assert d.findings == [] and d.first_layer is None


def test_repeated_identical_searches_point_at_the_candidate(tmp_path: Path) -> None:
    run = matrix_log(tmp_path, "no_progress")  # the same lookup three times
    d = diagnose(run.events)
    assert d.first_layer == "candidate"
    assert "repeated identical action" in _symptoms(d)["candidate"]
    assert _only(d, "candidate") == (
        "no_progress-react/t2.c0:tool.requested",
        "no_progress-react/t3.c0:tool.requested",
    )


def test_tool_success_with_acceptance_failing_points_at_the_observation(tmp_path: Path) -> None:
    run = matrix_log(tmp_path, "clean", cell=clean_cell())
    d = diagnose(run.events, accepted=False)  # the verifier accepted; the suite's checker not
    assert d.first_layer == "observation"
    assert "the suite's checker did not accept" in _symptoms(d)["observation"]
    assert all(":tool.started:" in e for e in _only(d, "observation"))
    assert diagnose(run.events, accepted=True).findings == []


def test_a_run_still_going_is_not_judged_on_its_last_verdict(tmp_path: Path) -> None:
    run = matrix_log(tmp_path, "verification_fails")
    going = [e for e in run.events if e.type is not EventType.RUN_FINISHED]
    assert "observation" not in _symptoms(diagnose(going))
    assert "observation" in _symptoms(diagnose(run.events))


def test_a_finish_the_verifier_rejected_points_at_termination(tmp_path: Path) -> None:
    run = matrix_log(tmp_path, "verification_fails")
    d = diagnose(run.events)
    assert "finish(es) the verifier rejected" in _symptoms(d)["termination"]
    assert _only(d, "termination") == ("verification_fails-react/t2:verifier.verdict",)
    # every call succeeded and still the verifier said no: the observation comes first
    assert d.first_layer == "observation"


def test_an_ungated_completed_run_that_fails_acceptance_points_at_termination() -> None:
    log = Log()
    log.admitted()
    log.control(1, "finish", "done")
    log.verdict(1, accepted=False, gated=False)
    log.finished("COMPLETED")
    d = diagnose(log.events, accepted=False)
    assert "without the verifier's gate" in _symptoms(d)["termination"]


def test_a_denied_call_is_an_attempted_unauthorized_call(tmp_path: Path) -> None:
    run = matrix_log(tmp_path, "permission_denied")
    d = diagnose(run.events)
    assert d.first_layer == "authorization"
    assert "attempted unauthorized call" in _symptoms(d)["authorization"]
    assert _only(d, "authorization") == ("permission_denied-react/t2.c0:tool.denied",)
    assert [f.layer for f in d.findings] == sorted((f.layer for f in d.findings), key=LAYERS.index)


@pytest.mark.timeout(120)
def test_a_rejected_approval_is_an_attempted_unauthorized_call(tmp_path: Path) -> None:
    run = diagnose(approval_run(tmp_path / "no", "reject").events)
    assert _only(run, "authorization") == ("r1/t2.c0:approval.resolved:0",)
    approved = diagnose(approval_run(tmp_path / "yes", "approve").events)
    assert "authorization" not in _symptoms(approved)


def test_an_execution_with_no_allow_is_reported_first() -> None:
    log = Log()
    log.call(1, "publish", {}, gate="require_approval")  # ran without an approval
    d = diagnose(log.events)
    assert "no allow standing" in _symptoms(d)["authorization"]
    assert _only(d, "authorization") == ("r1/t1.c0:tool.started:a1",)


def test_budget_burned_on_failing_calls_points_at_execution(tmp_path: Path) -> None:
    cell = Cell(
        "burn",
        "react",
        [lookup("a"), lookup("b"), lookup("c")],
        "BUDGET_EXHAUSTED",
        {"lookup": 3},
        3,
        budgets={"tool_calls": 3},
        lookup="fail",
    )
    d = diagnose(matrix_log(tmp_path, "burn", cell=cell).events)
    assert d.first_layer == "execution"
    assert "3 failed call(s) of 3" in _symptoms(d)["execution"]
    assert "ran out of budget" in _symptoms(d)["execution"]


def test_refused_model_replies_burn_the_model_budget(tmp_path: Path) -> None:
    d = diagnose(matrix_log(tmp_path, "illegal_output").events)
    assert d.first_layer == "candidate"  # the replies were not legal actions
    assert "3 refused model reply(ies) of 3" in _symptoms(d)["execution"]


def test_a_write_retried_after_an_unknown_outcome_points_at_execution(tmp_path: Path) -> None:
    d = diagnose(matrix_log(tmp_path, "write_lost_no_probe").events)
    assert d.first_layer == "execution"
    assert "requested again after a timeout or an unknown outcome" in _symptoms(d)["execution"]
    assert _only(d, "execution")[1] == "write_lost_no_probe-react/t3.c0:tool.requested"


def test_progress_lost_after_resume_points_at_the_state_update(tmp_path: Path) -> None:
    run = matrix_log(tmp_path, "clean", cell=clean_cell())
    assert diagnose(run.events, accepted=True).findings == []
    [done] = [e for e in run.events if e.type is EventType.TOOL_COMPLETED and e.call_id == "t2.c0"]
    again = make_event(
        EventType.TOOL_STARTED,
        done.run_id,
        call_id="t2.c0",
        turn_id="t2",
        decision_id="t2.d0",
        attempt_id="rerun",
        payload={"tool": "save@1.0.0"},
    )  # the committed save dispatched again, as a lost checkpoint would
    d = diagnose([*run.events, again], accepted=True)
    assert d.first_layer == "state update"
    assert _only(d, "state update") == ("clean-react/t2.c0:tool.started:rerun",)
    [first] = [e for e in run.events if e.type is EventType.MODEL_CALLED][:1]
    replayed = first.model_copy(update={"event_id": f"{first.event_id}:again"})
    d = diagnose([*run.events, replayed], accepted=True)  # turn t1 asked again after t3
    assert "re-run after a resume" in _symptoms(d)["state update"]


@pytest.mark.timeout(120)
def test_evidence_lost_in_a_parallel_merge_points_at_the_state_update(tmp_path: Path) -> None:
    run = demo_run(tmp_path)  # turn t2 reads two documents in parallel
    final = run.values["evidence"]
    whole = diagnose(run.events, observed_evidence=run.observed, final_evidence=final)
    assert "state update" not in _symptoms(whole)  # the real merge kept every item
    parallel = [item for item in run.observed if item.get("call_id") in ("t2.c0", "t2.c1")]
    assert parallel
    lost = {k: v for k, v in final.items() if k != parallel[0]["source_id"]}
    d = diagnose(run.events, observed_evidence=run.observed, final_evidence=lost)
    assert "parallel batch observed are missing" in _symptoms(d)["state update"]
    assert _only(d, "state update")[0].startswith(f"r1/{parallel[0]['call_id']}:tool.completed")
    alone = [item for item in run.observed if item.get("call_id") == "t1.c0"]
    assert alone  # the search's result: a single call's item missing is no parallel merge
    solo = {k: v for k, v in final.items() if k != alone[0]["source_id"]}
    d = diagnose(run.events, observed_evidence=run.observed, final_evidence=solo)
    assert "state update" not in _symptoms(d)


def test_a_run_rejected_at_admission_points_at_the_task_contract(tmp_path: Path) -> None:
    fake = FakeAdapter()
    fake.tool("lookup", effect="read")
    store = SqliteExecutionStore(tmp_path / "exec.db")
    graph = build_graph(
        "react",
        model=ScriptedChatModel([]),
        tools=fake.tools(),
        store=store,
        checkpointer=InMemorySaver(),
        home=tmp_path,
    )
    cfg: dict = {"configurable": {"thread_id": "bad"}}
    graph.invoke({"task": {"goal": "x", "allowed_actions": ["no_such_tool"]}}, cfg)
    d = diagnose(store.events("bad"))
    store.close()
    assert d.first_layer == "task contract"
    assert "rejected at admission" in d.findings[0].symptom
