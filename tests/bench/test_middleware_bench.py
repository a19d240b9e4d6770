"""The benchmark's middleware row times tool calls that really went through the executor."""

from __future__ import annotations

from pathlib import Path

from bench.middleware import THREAD, run_agent
from execgraph.state.home import Home
from execgraph.state.store.sqlite import SqliteExecutionStore


def test_the_middleware_run_records_each_tool_call_and_the_bare_run_none(tmp_path: Path) -> None:
    assert run_agent(True, 3, tmp_path / "with") > 0
    assert run_agent(False, 3, tmp_path / "without") > 0

    store = SqliteExecutionStore(Home.at(tmp_path / "with").exec_db)
    outcomes = {(o.tool, o.outcome): o.count for o in store.outcomes(THREAD)}
    assert outcomes == {("noop", "succeeded"): 3}
    assert not Home.at(tmp_path / "without").exec_db.exists()
