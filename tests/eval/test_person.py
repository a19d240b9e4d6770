"""The slow person: approvals answered after a seeded delay on the store's simulated clock
(no sleep), some only after they expired; the log shows the wait and the expiry."""

from __future__ import annotations

import functools
import time
from pathlib import Path

import pytest

from execgraph.eval import cells
from execgraph.eval.cells import Cell, run_cell
from execgraph.eval.person import MEDIAN_S, SimulatedClockStore, SlowPerson
from execgraph.state.events import EventType, make_event


def test_the_store_clock_and_its_events_run_ahead_by_what_the_person_took(tmp_path: Path) -> None:
    store = SimulatedClockStore(tmp_path / "exec.db")
    try:
        before = time.time()
        store.append_events([make_event(EventType.RUN_ADMITTED, "r1", turn_id="a")])
        store.advance(3600.0)
        store.advance(-5.0)  # time never runs back
        assert store.clock() >= before + 3600.0
        store.append_events([make_event(EventType.RUN_FINISHED, "r1", turn_id="b")])
        first, second = store.events("r1")
        assert first.ts < before + 60 and second.ts >= before + 3600.0
    finally:
        store.close()


def test_the_delays_are_seeded_mostly_minutes_and_some_past_expiry() -> None:
    def draws(seed: str) -> list[float]:
        person = SlowPerson(seed)
        return [person.delay({"expires_at": 86_400.0}, 0.0) for _ in range(400)]

    assert draws("1:t") == draws("1:t") and draws("1:t") != draws("2:t")
    delays = sorted(draws("1:t"))
    median = delays[len(delays) // 2]
    assert MEDIAN_S / 3 < median < MEDIAN_S * 3
    late = [d for d in delays if d > 86_400.0]
    assert 0.03 < len(late) / len(delays) < 0.2
    person = SlowPerson("1:t")
    person.answer_late(store := _Clock(), {"kind": "question"})
    assert store.moved == 0.0  # a question is answered at once


class _Clock:
    moved = 0.0

    def advance(self, seconds: float) -> None:
        self.moved += seconds

    def clock(self) -> float:
        return 0.0


@pytest.mark.timeout(120)
def test_a_slow_persons_wait_is_in_the_log_and_a_late_approval_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slow = run_cell(Cell("ledger-chain", "react", seed=0, noise=0.0, person="slow"))
    prompt = run_cell(Cell("ledger-chain", "react", seed=0, noise=0.0, person="prompt"))
    assert slow.metrics is not None and prompt.metrics is not None
    assert slow.metrics.accepted and prompt.metrics.accepted
    assert slow.metrics.approvals == prompt.metrics.approvals == 2
    assert slow.metrics.approval_wait_s > 60.0 > prompt.metrics.approval_wait_s
    assert slow.metrics.latency_s >= slow.metrics.approval_wait_s
    assert slow.metrics.latency_s - slow.metrics.approval_wait_s < 60.0
    # A person who always answers too late: every approval expires, nothing is written.
    monkeypatch.setattr(cells, "SlowPerson", functools.partial(SlowPerson, never_rate=1.0))
    never = run_cell(Cell("ledger-chain", "react", seed=0, noise=0.0, person="slow"))
    assert never.metrics is not None
    assert never.metrics.approvals_expired == never.metrics.approvals >= 1
    assert not never.metrics.accepted and never.metrics.status != "COMPLETED"
