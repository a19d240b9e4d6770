"""A run whose tools hang cannot starve other runs of the shared tool pool (issue 20, item 7).

A tool that ignores its deadline and cancel signal keeps its worker thread after the
executor abandons the call. Before, 64 such calls took the whole process-wide pool and an
unrelated run's tool never ran. Now a run holds at most ``RUN_SLOTS`` threads, abandoned
calls included; its further calls are refused unstarted at their deadline, the abandoned
ones are counted (``pool_usage``, a ``tool.pool`` entry in the call's events), and the
other run's tool runs at once.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from execgraph.nodes.executor.threads import pools
from execgraph.nodes.executor.threads.tool_pool import ToolPool
from execgraph.state.events import EventType
from execgraph.tools import tool_spec
from tests.support.executor import Counter, config, make_deps, make_executor, request


def _hanging(release: threading.Event, started: Counter) -> Any:
    @tool_spec(effect="read", timeout_s=0.3)
    def hang(i: int) -> str:
        """Block until the test lets go, ignoring deadline and cancel (a FIFO read)."""
        started.add(i)
        release.wait(timeout=120)
        return "late"

    return hang


def _quick(ran: Counter) -> Any:
    @tool_spec(effect="read", timeout_s=20)
    def quick(i: int) -> str:
        """Answer at once."""
        ran.add(i)
        return "quick"

    return quick


@pytest.mark.timeout(180)
def test_a_run_of_hanging_tools_leaves_the_pool_to_other_runs(tmp_path: Path) -> None:
    release, started = threading.Event(), Counter()
    stuck_deps = make_deps(tmp_path / "stuck", [_hanging(release, started)])
    stuck = make_executor(stuck_deps)
    ran = Counter()
    quick = _quick(ran)

    other_deps = make_deps(tmp_path / "other", [quick])
    other = make_executor(other_deps)
    try:
        for wave in range(2):  # the run's tools hang past their timeout, again and again
            batch = [
                request("hang", {"i": k}, root=tmp_path, call_id=f"w{wave}c{k}", run_id="stuck")
                for k in range(40)
            ]
            stuck.invoke({"batch": batch}, config(f"stuck-{wave}"))
        out = other.invoke(
            {"request": request("quick", {"i": 1}, root=tmp_path, run_id="other")}, config("o")
        )
        [result] = out["results"].values()
        assert result["status"] == "OK" and ran.effects == [1]  # the unrelated run's tool ran

        usage = pools.pool_usage("stuck")
        assert usage.busy == usage.abandoned == pools.RUN_SLOTS  # its share, no more
        assert len(started) == pools.RUN_SLOTS  # no hanging tool started beyond the share
        finished = [r.result or {} for r in stuck_deps.store.committed("stuck")]
        assert len(finished) == 80
        assert all(r["error"]["type"] == "DeadlineExceeded" for r in finished)
        refused = [r for r in finished if "never started" in r["error"]["message"]]
        assert len(refused) == 80 - pools.RUN_SLOTS  # the rest were abandoned, timed out
        assert all(r["side_effect"]["committed"] is False for r in refused)

        events = stuck_deps.store.events("stuck")
        reports = [
            e.payload
            for e in events
            if e.type is EventType.TOOL_OUTPUT and e.payload.get("kind") == "tool.pool"
        ]
        assert len(reports) == pools.RUN_SLOTS
        assert max(r["run_abandoned"] for r in reports) == pools.RUN_SLOTS
    finally:
        release.set()
    # Once the tools end, the run's slots come back and nothing is counted as running.
    deadline = threading.Event()
    for _ in range(200):
        if pools.pool_usage("stuck").busy == 0:
            break
        deadline.wait(0.05)
    usage = pools.pool_usage("stuck")
    assert usage.busy == 0 and usage.abandoned == 0


@pytest.mark.timeout(240)
def test_many_runs_of_hanging_tools_cannot_use_up_the_pool(tmp_path: Path) -> None:
    """Five runs, each holding its full share of hung threads (80 > the pool's 64): the
    pool replenishes itself, so a sixth, unrelated run's tool still runs at once."""
    release, started = threading.Event(), Counter()
    stuck_deps = make_deps(tmp_path / "stuck", [_hanging(release, started)])
    stuck = make_executor(stuck_deps)
    ran = Counter()
    quick = _quick(ran)

    other = make_executor(make_deps(tmp_path / "other", [quick]))
    pool = stuck_deps.pool
    assert isinstance(pool, ToolPool)
    before = pool.generation
    try:
        runs = [f"stuck-{n}" for n in range(5)]
        for run in runs:
            batch = [
                request("hang", {"i": k}, root=tmp_path, call_id=f"{run}c{k}", run_id=run)
                for k in range(pools.RUN_SLOTS)
            ]
            stuck.invoke({"batch": batch}, config(run))
        assert len(started) == 5 * pools.RUN_SLOTS  # every hung call got a thread
        assert sum(pools.pool_usage(r).abandoned for r in runs) == 5 * pools.RUN_SLOTS

        out = other.invoke(
            {"request": request("quick", {"i": 1}, root=tmp_path, run_id="other")}, config("o")
        )
        [result] = out["results"].values()
        assert result["status"] == "OK" and ran.effects == [1]
        assert pool.generation > before  # it was replenished
    finally:
        release.set()


def test_past_the_process_limit_a_call_is_refused_unstarted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the process's abandoned calls at the limit, a call is refused at once, saying
    why, and its tool never starts."""
    ran = Counter()
    quick = _quick(ran)

    ended = [pools.abandon_slot("elsewhere") for _ in range(3)]
    monkeypatch.setattr(pools, "ABANDONED_LIMIT", 3)  # these three keep it reached
    try:
        out = make_executor(make_deps(tmp_path, [quick])).invoke(
            {"request": request("quick", {"i": 1}, root=tmp_path, run_id="late")}, config("l")
        )
    finally:
        for end in ended:
            end()
    [result] = out["results"].values()
    assert result["status"] != "OK" and ran.effects == []
    assert result["error"]["type"] == "DeadlineExceeded"
    assert "abandoned tool calls still running" in result["error"]["message"]
