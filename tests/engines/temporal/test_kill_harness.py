"""Issue 19's kill harness: 30 ledger runs on 3 workers that are SIGKILLed and restarted.

Asserted, per run and in total: every run ends in a terminal status; no effect happens
twice (counted by the tools in the world, not by the runtime); no commit is lost; no
record of the probed ledger tool is left unknown; no lock is left held. Something must
have been killed while a tool ran, or the test proved nothing.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from execgraph.engines.temporal.messages import TERMINAL
from tests.engines.temporal.kill_harness import run_harness


@pytest.mark.timeout(900)
def test_killed_workers_lose_nothing_and_repeat_nothing(
    temporal_address: str, postgres_database: str, tmp_path: Path
) -> None:
    result = asyncio.run(
        run_harness(temporal_address, postgres_database, tmp_path, runs=30, workers=3, kills=10)
    )
    report = result.render()
    assert len(result.runs) == 30, report
    assert all(r.status in TERMINAL for r in result.runs), report
    # a run that did not complete must be held back by an honest unknown: a transfer cut
    # off mid-call, which no probe can settle (a person reconciles it)
    assert all(r.status == "COMPLETED" or r.unknown_left for r in result.runs), report
    assert result.total("duplicates") == 0, report
    assert result.total("lost_commits") == 0, report
    assert result.total("orphans") == 0, report
    assert result.unknown_probed == 0, report
    assert result.total("leaked_locks") == 0, report
    assert result.disagreements == 0, report
    assert result.kills == 10 and result.kills_mid_tool > 0, report
    print(report)  # the figures, for `pytest -s`
