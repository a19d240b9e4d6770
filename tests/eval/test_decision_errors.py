"""Decision errors classified from the event log agree with what the noisy policy did.

The noisy policy labels each error it injects (``response_metadata["injected_error"]``);
the classifier never reads those labels, only the log. Where an injected error has one
unambiguous trace in the log, the classifier must put that turn's decision in the class
it belongs to; the oracle's runs have no decision error at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from execgraph.eval.decision_errors import CLASSES, classify, counts
from execgraph.eval.diagnose import diagnose
from execgraph.eval.suite import task_def
from execgraph.eval.trajectory import read_trajectory
from execgraph.state.events import EventType
from execgraph.state.home import Home
from execgraph.state.store.sqlite import SqliteExecutionStore
from tests.support.eval_runs import run_task

EXPECTED = {
    "unknown_tool": {"protocol"},
    # A tool this run does not offer: refused as not allowed (action); or, since the
    # runtime checks arguments before the policy, for the arguments it was called with
    # (parameter); or, a tool no adapter of this world has, as unknown (protocol). The log
    # shows only the refusal.
    "disallowed_tool": {"action", "parameter", "protocol"},
    "malformed_arguments": {"protocol", "parameter"},
    "premature_finish": {"stop_judgement"},
}
"""Injected error -> the classes its trace in the log may take."""
TASKS = ("read-config-value", "write-summary-report", "patch-config", "ledger-chain")


def _events(
    task_id: str, arch: str, seed: int, noise: float, workdir: Path, **settings: object
) -> tuple:
    run = run_task(task_def(task_id).task, arch, workdir, seed=seed, noise=noise, **settings)
    store = SqliteExecutionStore(Home(workdir / "home").exec_db)
    try:
        return store.events(f"{task_id}-{arch}-{seed}"), run.accepted
    finally:
        store.close()


def _injected(events: list) -> dict[str, str]:
    """turn id -> the error the policy said it injected there."""
    out = {}
    for e in events:
        if e.type is EventType.MODEL_CALLED:
            meta = ((e.payload.get("message") or {}).get("data") or {}).get("response_metadata")
            if meta and meta.get("injected_error"):
                out[str(e.turn_id)] = str(meta["injected_error"])
    return out


@pytest.mark.timeout(300)
def test_the_log_alone_classifies_the_injected_errors(tmp_path: Path) -> None:
    checked: dict[str, int] = {}
    classes: set[str] = set()
    for task_id in TASKS:
        for seed, arch in ((0, "react"), (1, "react"), (2, "workflow"), (3, "workflow")):
            workdir = tmp_path / f"{task_id}-{seed}"
            events, accepted = _events(task_id, arch, seed, 0.5, workdir)
            t = read_trajectory(events)
            found: dict[str, set[str]] = {}
            for error in classify(t, accepted=accepted):
                found.setdefault(str(error.turn_id), set()).add(error.kind)
                classes.add(error.kind)
            for turn, injected in _injected(events).items():
                if injected in EXPECTED:
                    assert found.get(turn, set()) & EXPECTED[injected], (task_id, seed, turn)
                    checked[injected] = checked.get(injected, 0) + 1
    assert set(checked) == set(EXPECTED), checked  # each kind was seen and classified
    assert {"parameter", "protocol", "stop_judgement", "understanding"} <= classes


@pytest.mark.timeout(120)
def test_a_call_the_policy_denies_is_an_action_error(tmp_path: Path) -> None:
    """The world's policy denies the write the task needs: the model's attempt at it is
    an action error (the wrong action here), and nothing else is."""
    events, accepted = _events(
        "write-summary-report", "react", 0, 0.0, tmp_path, fault="permission_denied"
    )
    found = counts(classify(read_trajectory(events), accepted=accepted))
    assert found["action"] >= 1 and not accepted
    assert found["parameter"] == found["protocol"] == 0


@pytest.mark.timeout(120)
@pytest.mark.parametrize("task_id", TASKS)
def test_the_oracle_makes_no_decision_error(task_id: str, tmp_path: Path) -> None:
    events, accepted = _events(task_id, "react", 0, 0.0, tmp_path)
    assert accepted
    assert counts(classify(read_trajectory(events), accepted=True)) == dict.fromkeys(CLASSES, 0)


@pytest.mark.timeout(120)
def test_diagnose_lists_the_decision_errors_with_their_events(tmp_path: Path) -> None:
    events, accepted = _events("read-config-value", "react", 1, 0.6, tmp_path)
    d = diagnose(events, accepted=accepted)
    ids = {e.event_id for e in events}
    assert d.decision_errors and all(e.event_id in ids for e in d.decision_errors)
    assert all(e.kind in CLASSES and e.why for e in d.decision_errors)
