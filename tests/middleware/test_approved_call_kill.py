"""SIGKILL while an approved call's effect runs: the restart does not run it again, and
what it reports is true.

Real processes (:mod:`tests.middleware.approved_worker`), real SQLite. One process runs
the agent to its approval pause; a second answers ``approve`` and is SIGKILLed once the
payment is on disk, while the tool still runs (after the approval, before the tool
returned: no result was recorded, no checkpoint written after it). A third restarts the
run from its last checkpoint. The call's execution record was written before the effect,
so the restart finds it and reconciles it instead of paying again: ``unknown`` when the
tool has no way to tell (the model is told so, not that it paid), or, with a reconcile
probe that reads the payments, ``succeeded`` as found. Nobody is asked to approve again.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from execgraph.state.home import Home
from execgraph.state.store.sqlite import SqliteExecutionStore
from tests.middleware.approved_worker import CONFIG

pytestmark = [pytest.mark.system, pytest.mark.timeout(300)]

REPO = Path(__file__).resolve().parents[2]


def _worker(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.middleware.approved_worker", *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-3000:]
    return dict(json.loads(out.strip().splitlines()[-1]))


def _kill_once_paid(proc: subprocess.Popen[str], payments: Path) -> None:
    """SIGKILL ``proc`` as soon as its payment is on disk (its tool is still running)."""
    deadline = time.monotonic() + 120
    while not (payments.exists() and payments.read_text()):
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "the approved call never ran"
        time.sleep(0.01)
    proc.kill()
    proc.wait(30)
    assert proc.returncode == -9  # killed, not finished


@pytest.mark.parametrize("probe", [False, True], ids=["no-probe", "with-probe"])
def test_a_kill_during_an_approved_call_neither_repeats_it_nor_misreports_it(
    tmp_path: Path, probe: bool
) -> None:
    flags = ["--probe"] if probe else []
    payments = tmp_path / "payments.log"
    assert _finish(_worker("ask", str(tmp_path), *flags)) == {"asked": ["pay"]}

    _kill_once_paid(_worker("approve", str(tmp_path), *flags), payments)
    store = SqliteExecutionStore(Home.at(tmp_path / "home").exec_db)
    [started] = store.pending(CONFIG["configurable"]["thread_id"])
    assert started.state == "started"  # the record was on disk before the payment

    restarted = _finish(_worker("restart", str(tmp_path), *flags))

    assert payments.read_text().splitlines() == ["ann 40"]  # paid once
    assert restarted["asked_again"] == 0  # the approval stood; nobody asked twice
    [record] = store.committed(CONFIG["configurable"]["thread_id"])
    assert record.result is not None
    if probe:  # found out: the payment is there
        assert record.result["outcome"] == "succeeded" and record.result["reconciled"] is True
    else:  # nothing can tell: unknown, and the model is told so
        assert record.result["outcome"] == "unknown"
        assert "unknown" in restarted["answer"].lower()
    assert "paid ann 40" not in restarted["answer"]  # no answer the tool never gave
    assert restarted["status"] == "completed"
    assert store.pending(CONFIG["configurable"]["thread_id"]) == []
