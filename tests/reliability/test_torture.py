"""Crash-resume torture, the fast subset: real worker processes, SIGKILL, real SQLite.

The full run is ``python -m tests.reliability.torture --trials 200`` (see that module).
Here a few seeded trials per workload must show zero duplicated effects and zero lost
commits, and planned crashes (a worker dying right after an effect, before its commit)
check reconciliation exactly.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from execgraph.cli.reach import demo_graphs
from execgraph.cli.task_input import new_run_id
from execgraph.demo.build import demo_task
from execgraph.engines.advance import config_of as run_config
from execgraph.engines.embedded.records import RunMeta, save_meta
from execgraph.engines.embedded.runs import EmbeddedRuns
from execgraph.state.store.sqlite import SqliteExecutionStore
from tests.reliability.crash_worker import TERMINAL, THREAD
from tests.reliability.torture import Forkserver, TrialResult, analyze, parse_args, run_trials
from tests.support.cli_helpers import cli


@pytest.fixture(scope="module")
def server() -> Iterator[Forkserver]:
    srv = Forkserver()
    yield srv
    srv.close()


@pytest.mark.parametrize("workload", ["demo", "ledger"])
def test_fast_subset_has_no_duplicates_and_no_lost_commits(
    server: Forkserver, tmp_path: Path, workload: str
) -> None:
    opts = parse_args(["--trials", "8", "--workload", workload, "--seed", "7"])
    summary = run_trials(opts, tmp_path, server)
    report = summary.render(f"torture {workload}")
    assert summary.total("duplicates") == 0, report
    assert summary.total("lost_commits") == 0, report
    assert summary.total("orphans") == 0, report
    assert summary.total("leaked_locks") == 0 and summary.total("stalled") == 0, report
    # every trial stops; one that does not complete must be blocked by an honest unknown
    assert all(t.status in TERMINAL for t in summary.trials), report
    assert all(t.status == "COMPLETED" or t.unknown_left for t in summary.trials), report
    assert summary.total("attempts") > len(summary.trials), report  # something was killed


def _crash_then_resume(server: Forkserver, base: Path, workload: str, crash: str) -> dict[str, Any]:
    base.mkdir(parents=True)
    cmd = {
        "dir": str(base),
        "workload": workload,
        "arch": "react",
        "log": str(base / "worker.log"),
        "kill_after": None,
        "timeout": 240.0,
        "crash": crash,
    }
    crashed = server.attempt(cmd)
    assert crashed["code"] == 17, (base / "worker.log").read_text()
    with SqliteExecutionStore(base / "exec.db") as store:
        assert [r.state for r in store.pending(THREAD)] != []  # the record preceded the effect
    resumed = server.attempt(cmd)  # a new process; the crash marker stops a second crash
    assert resumed["code"] == 0, (base / "worker.log").read_text()
    return json.loads((base / "final.json").read_text())


@pytest.fixture(scope="module")
def ledger_crash(server: Forkserver, tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("crash") / "debit-5"
    _crash_then_resume(server, base, "ledger", "after:debit-5")
    return base


def test_crash_after_probed_effect_is_reconciled_not_repeated(ledger_crash: Path) -> None:
    final = json.loads((ledger_crash / "final.json").read_text())
    assert final["status"] == "COMPLETED"
    lines = (ledger_crash / "workspace" / "ledger.txt").read_text().splitlines()
    assert sum(line.startswith("debit-5 ") for line in lines) == 1
    booked = final["results"]["t6.c0"]  # turn 6, first call: debit-5
    assert booked["outcome"] == "succeeded" and booked["reconciled"] is True
    trial = TrialResult(0, final["status"])
    analyze(ledger_crash, trial)
    assert (trial.duplicates, trial.lost_commits, trial.orphans) == (0, 0, 0), trial.notes
    # tx-3 ran in parallel with debit-5 and may have been cut off too: only the probe-less
    # transfer may stay unknown
    unknown = [r["tool_name"] for r in final["results"].values() if r["outcome"] == "unknown"]
    assert set(unknown) <= {"post_transfer"}, unknown


def test_crash_after_probed_effect_releases_its_locks(ledger_crash: Path) -> None:
    trial = TrialResult(0, "COMPLETED")
    analyze(ledger_crash, trial)
    assert trial.leaked_locks == 0, trial.notes


def test_crash_after_unprobed_effect_stays_unknown(server: Forkserver, tmp_path: Path) -> None:
    final = _crash_then_resume(server, tmp_path / "tx-1", "ledger", "after:tx-1")
    lines = (tmp_path / "tx-1" / "workspace" / "transfers.txt").read_text().splitlines()
    assert sum(line.startswith("tx-1 ") for line in lines) == 1  # never retried blindly
    [sent] = [r for r in final["results"].values() if r["call_id"] == "t2.c0"]
    assert sent["outcome"] == "unknown" and sent["side_effect"]["committed"] is None
    assert sent["error"]["type"] == "ResponseLostError"
    with SqliteExecutionStore(tmp_path / "tx-1" / "exec.db") as store:
        assert store.pending(THREAD) == []
    trial = TrialResult(0, final["status"])
    analyze(tmp_path / "tx-1", trial)
    assert (trial.duplicates, trial.lost_commits, trial.orphans) == (0, 0, 0), trial.notes
    assert trial.unknown_left == 1  # reported honestly, for a person to reconcile


def test_crash_after_publish_does_not_publish_twice(server: Forkserver, tmp_path: Path) -> None:
    base = tmp_path / "publish"
    final = _crash_then_resume(server, base, "demo", "after:publish")
    assert final["status"] == "COMPLETED"
    log = [json.loads(line) for line in (base / "effects.log").read_text().splitlines()]
    assert [entry["already"] for entry in log] == [False]  # one execution, never repeated
    [published] = [r for r in final["results"].values() if r["tool_name"] == "publish_report"]
    assert published["outcome"] == "succeeded" and published["reconciled"] is True
    trial = TrialResult(0, final["status"])
    analyze(base, trial)
    assert (trial.duplicates, trial.lost_commits, trial.orphans) == (0, 0, 0), trial.notes


def _drop_latest_checkpoint(db: Path, thread: str) -> None:
    """Leave the store as a SIGKILL can: a step's writes saved, its next checkpoint not.

    LangGraph saves checkpoints asynchronously while the next step runs, so a kill can
    land after the writes of step k were durable but before checkpoint k+1 was.
    """
    conn = sqlite3.connect(db)
    with conn:
        [latest] = conn.execute(
            "SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''",
            (thread,),
        ).fetchone()
        for table in ("checkpoints", "writes"):
            conn.execute(
                f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_id = ?", (thread, latest)
            )
    conn.close()


def test_cli_resume_continues_a_run_killed_between_checkpoints(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_id = new_run_id()
    runs = EmbeddedRuns(home, graphs=demo_graphs(import_refs=False))
    meta = RunMeta(run_id, "react", "offline", demo_task(), time.time(), str(home / "ws"))
    save_meta(runs.home, meta)
    app = runs.graph(meta.spec)
    app.invoke({"task": meta.task}, run_config(run_id), interrupt_after=["decide"])
    _drop_latest_checkpoint(home / "checkpoints.db", run_id)
    snap = app.get_state(run_config(run_id))
    assert snap.next == () and snap.values["status"] == "RUNNING"  # what the torture met
    resumed = cli("resume", run_id, "--no-input", home=home)
    status = runs.status(run_id).status
    assert status != "RUNNING", resumed.out + resumed.err


def test_crash_before_a_file_write_is_proven_absent_and_run(
    server: Forkserver, tmp_path: Path
) -> None:
    final = _crash_then_resume(server, tmp_path / "draft", "demo", "before:write_file")
    draft = final["results"]["t3.c0"]  # the first write_file of the react demo
    assert draft["outcome"] == "succeeded", draft
