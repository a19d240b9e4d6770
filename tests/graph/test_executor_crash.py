"""A process dies after the side effect and before commit; a new process resumes the thread."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from execgraph.state.store.sqlite import SqliteExecutionStore

REPO = Path(__file__).resolve().parents[2]


def _worker(mode: str, base: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tests.support.crash_worker", mode, "--dir", str(base), *flags],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("probe", [True, False], ids=["with-probe", "no-probe"])
def test_crash_after_effect_resumes_without_duplicating_it(tmp_path: Path, probe: bool) -> None:
    flags = ["--probe"] if probe else []
    crashed = _worker("run", tmp_path, "--crash", *flags)
    assert crashed.returncode == 17, crashed.stderr
    ledger = tmp_path / "ws" / "ledger.txt"
    assert ledger.read_text().splitlines() == ["debit 100"]
    store = SqliteExecutionStore(tmp_path / "exec.db")
    [pending] = store.pending("run-crash")
    assert pending.state == "started"  # the durable record preceded the effect

    resumed = _worker("resume", tmp_path, *flags)
    assert resumed.returncode == 0, resumed.stderr
    result: dict[str, Any] = json.loads(resumed.stdout.strip().splitlines()[-1])
    assert ledger.read_text().splitlines() == ["debit 100"]  # exactly once
    if probe:
        assert result["outcome"] == "succeeded" and result["reconciled"] is True
    else:
        assert result["outcome"] == "unknown" and result["side_effect"]["committed"] is None
    record = store.get("run-crash:call-1")
    assert record is not None and record.state == "committed"
    assert store.pending("run-crash") == []

    again = _worker("resume", tmp_path, *flags)  # resuming a finished thread changes nothing
    assert again.returncode == 0, again.stderr
    assert ledger.read_text().splitlines() == ["debit 100"]
