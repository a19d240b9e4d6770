"""Flaky services: seeded outages, the same for a request whatever order it arrives in,
lasting bursts that can outlast an adapter's retries; and what a flaky world does to a run
(tool success below 1, recovery measured from the log)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections import Counter

import pytest

from execgraph.eval.cells import Cell, run_cell
from execgraph.eval.tasks.flaky import KINDS, MAX_BURST, Flakiness, flaky_services
from execgraph.eval.tasks.server import TaskServer


def test_outages_are_a_function_of_the_seed_and_the_request_only() -> None:
    a, b = Flakiness(0.3, "1:task"), Flakiness(0.3, "1:task")
    draws = [a.outage("GET /x", n, write=False) for n in range(200)]
    assert draws == [b.outage("GET /x", n, write=False) for n in range(200)]
    other = [Flakiness(0.3, "2:task").outage("GET /x", n, write=False) for n in range(200)]
    assert draws != other
    assert all(Flakiness(0.0, "1:task").outage("GET /x", n, write=False) is None for n in range(50))


def test_outages_come_at_about_the_rate_in_bursts_of_every_kind() -> None:
    flaky = Flakiness(0.1, "7:task")
    reads = [flaky.outage(f"GET /{i}", n, write=False) for i in range(300) for n in range(8)]
    writes = [flaky.outage(f"POST /{i}", n, write=True) for i in range(300) for n in range(8)]
    hit = sum(1 for d in reads if d) / len(reads)
    assert 0.1 < hit < 0.4  # a start at 10% lasts 1..4 requests
    kinds = Counter(d for d in reads + writes if d)
    assert set(kinds) == {k for k, _ in KINDS}
    assert "timeout" not in {d for d in writes if d} and "partial_write" not in set(reads)
    # Some outage outlasts three identical requests (an adapter's retries).
    runs = [
        [flaky.outage(f"GET /{i}", n, write=False) for n in range(MAX_BURST)] for i in range(300)
    ]
    assert any(all(run[:3]) for run in runs)


@pytest.mark.integration
def test_a_flaky_server_answers_503_and_429_and_records_only_what_it_did() -> None:
    with flaky_services(Flakiness(0.5, "3:server")):
        server = TaskServer({("GET", "/a"): lambda r: (200, {"ok": True})})
    try:
        codes = []
        for _ in range(30):
            try:
                with urllib.request.urlopen(f"{server.base}/a", timeout=5) as reply:
                    codes.append(reply.status)
                    assert json.loads(reply.read()) == {"ok": True}
            except urllib.error.HTTPError as exc:
                codes.append(exc.code)
                if exc.code in (429, 503):
                    assert exc.headers["Retry-After"]
        failed = [k for k, _, _ in server.outages if k != "timeout"]
        assert 200 in codes and {429, 503} & set(codes)
        assert len(server.requests("GET", "/a")) == codes.count(200)
        assert len(failed) == len(codes) - codes.count(200)
    finally:
        server.close()
    with flaky_services(None):
        reliable = TaskServer({})
    reliable.close()
    assert reliable.flakiness is None


@pytest.mark.integration
@pytest.mark.timeout(300)
def test_a_flaky_world_lowers_tool_success_and_its_recovery_is_measured() -> None:
    failed = recovered = calls = succeeded = 0
    for seed in range(3):
        result = run_cell(Cell("inventory-sync", "react", seed=seed, noise=0.0, flaky=0.2))
        assert result.metrics is not None, result.error
        m = result.metrics
        failed, recovered = failed + m.actions_failed, recovered + m.actions_recovered
        calls, succeeded = calls + m.tool_calls, succeeded + m.tool_calls_succeeded
        assert sum(m.decision_errors.values()) == 0  # the world's failures, not the model's
    assert succeeded < calls
    assert 0 < recovered <= failed
