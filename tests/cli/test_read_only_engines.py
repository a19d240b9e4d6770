"""The read-only commands (and ``reconcile``) on every engine: a run's records in
PostgreSQL (``--database``), and a run on Temporal (``--engine temporal``, read by a
worker: the client has no access to the records itself)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from execgraph.state.store.sqlite import SqliteExecutionStore
from tests.support.cli_helpers import Result, cli, cli_process
from tests.support.temporal_cli import CliWorker, cli_worker, temporal_flags

pytestmark = pytest.mark.timeout(300)

RAISING = "tests.support.cli_raising_tools:raising_demo"
LOSSY = "tests.support.cli_slow_tools:lossy_demo"


def _json(result: Result) -> dict:
    assert result.code == 0, result
    return json.loads(result.out)


def _reads_back(run: list[str], rid: str) -> None:
    """trace, metrics, diagnose, replay and status of a finished demo run."""
    trace = run_cli(run, "trace", rid)
    assert trace.code == 0, trace
    for event in ("run.admitted", "approval.resolved", "tool.completed", "run.finished"):
        assert event in trace.out, event
    metrics = _json(run_cli(run, "metrics", rid, "--json"))
    assert metrics["accepted_by"] == "verifier"
    assert metrics["counts"]["tool_calls"] > 0 and metrics["counts"]["unauthorized_executions"] == 0
    diagnosis = _json(run_cli(run, "diagnose", rid, "--json"))
    assert diagnosis["first_layer"] == "termination"
    replayed = run_cli(run, "replay", rid)
    assert replayed.code == 0 and "same trajectory" in replayed.out, replayed
    status = run_cli(run, "status", rid)
    assert status.code == 0 and status.status == "COMPLETED", status


def run_cli(prefix: list[str], *args: str) -> Result:
    """``prefix[0]`` says how (in this process, or a process); the rest are flags."""
    how, *flags = prefix
    return (cli if how == "here" else cli_process)(*args, *flags)


def test_every_read_works_on_a_postgresql_database(postgres_database: str, tmp_path: Path) -> None:
    flags = ["here", "--database", postgres_database, "--home", str(tmp_path)]
    done = run_cli(flags, "demo", "--run-id", "pg1", "--auto-approve")
    assert done.code == 0, done
    _reads_back(flags, "pg1")
    assert not (tmp_path / "exec.db").exists()  # every read went to PostgreSQL
    listed = run_cli(flags, "runs")
    assert "pg1" in listed.out and "COMPLETED" in listed.out, listed

    task = tmp_path / "task.json"
    task.write_text(json.dumps({"goal": "Write report.md"}))
    lossy = run_cli(flags, "run", str(task), "--tools", LOSSY, "--run-id", "pg2", "--no-input")
    assert lossy.code in (3, 4), lossy
    call = next(
        e.call_id for e in _events_of(postgres_database, "pg2") if e.type == "tool.completed"
        and (e.payload or {}).get("outcome") == "unknown"
    )  # fmt: skip
    settled = run_cli(flags, "reconcile", "pg2", call, "--did-not-happen", "--by", "bob")
    assert settled.code == 0 and "took no effect: safe to run again" in settled.out, settled


def _events_of(dsn: str, run_id: str) -> list:
    from execgraph.state.store.postgres import PostgresExecutionStore

    store = PostgresExecutionStore(dsn)
    try:
        return store.events(run_id)
    finally:
        store.close()


@pytest.fixture(scope="module")
def worker(temporal_address: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CliWorker]:
    """One worker serving the demo and two tool sets its operator registered."""
    home = tmp_path_factory.mktemp("temporal-reads") / "worker-home"
    queue = f"reads-{uuid.uuid4().hex[:8]}"
    extra = ["--tools", f"raising={RAISING}", "--tools", f"lossy={LOSSY}"]
    with cli_worker(temporal_address, queue, home, *extra) as running:
        assert running.ready.endswith("tool sets: demo, lossy, raising"), running.ready
        yield running


def test_every_read_works_on_a_temporal_run(temporal_address: str, worker: CliWorker) -> None:
    flags = ["process", *temporal_flags(temporal_address, worker.task_queue)]
    rid = f"tr-{uuid.uuid4().hex[:8]}"
    signing = ["--home", str(worker.home)]  # the worker's approval key signs the answer
    done = run_cli(flags, "demo", "--run-id", rid, "--auto-approve", *signing)
    assert done.code == 0, done
    _reads_back(flags, rid)
    listed = run_cli(flags, "runs")
    assert rid in listed.out and "COMPLETED" in listed.out, listed


def test_a_registered_tool_set_runs_on_the_worker_and_its_trace_shows_it(
    temporal_address: str, worker: CliWorker, tmp_path: Path
) -> None:
    flags = ["process", *temporal_flags(temporal_address, worker.task_queue)]
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"goal": "Compare RAG and long context; write report.md"}))
    rid = f"raise-{uuid.uuid4().hex[:8]}"
    ran = run_cli(flags, "run", str(task), "--tools", "raising", "--run-id", rid, "--no-input")
    assert ran.status is not None, ran
    trace = run_cli(flags, "trace", rid)
    assert trace.code == 0, trace
    assert "invoke: RuntimeError: corpus index /srv/idx-9 is corrupt" in trace.out

    lossy = f"lossy-{uuid.uuid4().hex[:8]}"
    ran = run_cli(flags, "run", str(task), "--tools", "lossy", "--run-id", lossy, "--no-input")
    assert ran.code in (3, 4), ran
    with SqliteExecutionStore(worker.home / "exec.db") as store:
        [call] = [
            r.call_id
            for r in store.committed(lossy)
            if (r.result or {}).get("outcome") == "unknown"
        ]
    settled = run_cli(flags, "reconcile", lossy, call, "--happened", "--by", "alice")
    assert settled.code == 0, settled
    assert f"{call} of run {lossy} took effect: committed" in settled.out
