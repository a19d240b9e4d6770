"""Smoke test of the benchmark command: it runs, completes and prints ratios.

Timings are never asserted: the benchmark is a separate command whose figures depend on the
machine; here we only check that the harness works end to end on a tiny workload.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_quick_steps_run_prints_ratios(tmp_path: Path) -> None:
    out_json = tmp_path / "bench.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "--quick",
            "--only",
            "steps",
            "--steps",
            "2,3",
            "--json",
            str(out_json),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "220"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "execgraph vs LangGraph" in proc.stdout
    assert "create_agent" in proc.stdout
    assert re.search(r"\d+\.\d\dx", proc.stdout)  # a ratio column was printed
    data = json.loads(out_json.read_text())
    rows = data["rows"]
    assert {r["baseline_name"] for r in rows} >= {"create_agent+SqliteSaver(sync)"}
    assert all(r["ratio"] is not None and r["ratio"] > 0 for r in rows)
    # the short run finished verified; the long run stopped at its approval pause
    assert "COMPLETED" in proc.stdout and "WAITING" in proc.stdout
