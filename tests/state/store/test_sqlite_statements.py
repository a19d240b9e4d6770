"""What a read step asks of SQLite, statement by statement.

Each statement is a round trip into SQLite and a release of the GIL, which LangGraph's
checkpoint writer may then hold a while, so the shape of a step's two transactions is
part of the design: events in one statement, a reservation and a commit deciding in one,
and no ``PRAGMA`` while the synchronous level stays what the last transaction wanted.
The count is deterministic, so this guards the design without timing anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from execgraph.state.events import EventType, make_event
from execgraph.state.store import Claim, SqliteExecutionStore


def _claim(key: str) -> Claim:
    return Claim(
        key=key,
        run_id="run-1",
        call_id=f"call-{key}",
        tool="look",
        version="1.0.0",
        args_hash=f"sha256:{key}",
        attempt_id="att-1",
    )


def _verbs(trace: list[str]) -> list[str]:
    return [" ".join(sql.split()[:3]) for sql in trace]


@pytest.fixture
def traced(tmp_path: Path) -> Iterator[tuple[SqliteExecutionStore, list[str]]]:
    store = SqliteExecutionStore(tmp_path / "execgraph.db")
    trace: list[str] = []
    assert store._conn is not None
    store._conn.set_trace_callback(trace.append)  # sqlite3's own hook: every statement run
    yield store, trace
    store.close()


def test_a_read_steps_two_transactions_run_eight_statements(
    traced: tuple[SqliteExecutionStore, list[str]],
) -> None:
    store, trace = traced
    store.append_events([make_event(EventType.RUN_ADMITTED, "run-1")], durable=False)
    trace.clear()  # the level is NORMAL now, as a read step's transactions want it

    for step in range(2):
        decisions = [
            make_event(EventType.DECISION_RECORDED, "run-1", turn_id=f"t{step}", seq=i or None)
            for i in range(2)
        ]
        [held] = store.reserve_all([_claim(f"k{step}")], durable=False, log=decisions)
        assert held.fresh
        done = [
            make_event(EventType.TOOL_STARTED, "run-1", call_id=f"call-k{step}"),
            make_event(EventType.TOOL_OUTPUT, "run-1", call_id=f"call-k{step}"),
            make_event(EventType.TOOL_COMPLETED, "run-1", call_id=f"call-k{step}"),
        ]
        store.commit(f"k{step}", {"status": "OK"}, events=done, durable=False)

    assert _verbs(trace) == 2 * [
        "BEGIN IMMEDIATE",
        "INSERT INTO events",  # the turn's reply and decisions, one statement
        "INSERT INTO executions",  # decides: new, or read back only if it exists
        "COMMIT",
        "BEGIN IMMEDIATE",
        "UPDATE executions SET",  # decides: commits, or matches nothing if committed
        "INSERT INTO events",  # the call's three events, one statement
        "COMMIT",
    ]
    assert len(store.events("run-1")) == 1 + 2 * 5


def test_the_level_is_set_only_when_a_transaction_wants_another(
    traced: tuple[SqliteExecutionStore, list[str]],
) -> None:
    store, trace = traced
    for i, durable in enumerate((True, False, False, True, True)):
        store.append_events([make_event(EventType.RUN_ADMITTED, f"run-{i}")], durable=durable)
    pragmas = [sql for sql in trace if sql.startswith("PRAGMA")]
    assert pragmas == ["PRAGMA synchronous = NORMAL", "PRAGMA synchronous = FULL"]


def test_a_second_commit_reads_the_winner_and_appends_nothing(
    traced: tuple[SqliteExecutionStore, list[str]],
) -> None:
    store, trace = traced
    store.reserve_all([_claim("k")])
    store.commit("k", {"winner": 1})
    trace.clear()
    late = make_event(EventType.TOOL_COMPLETED, "run-1", call_id="call-k", attempt_id="late")
    assert store.commit("k", {"winner": 2}, events=[late]).result == {"winner": 1}
    assert _verbs(trace) == [
        "BEGIN IMMEDIATE",
        "UPDATE executions SET",
        "SELECT idempotency_key, run_id,",
        "COMMIT",
    ]
    assert store.events("run-1") == []
