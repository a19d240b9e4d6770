"""Measure the figures the documentation's evidence pages show, into ``docs/data/``.

Each subcommand runs the project's own measuring command and writes its JSON under
``docs/data/`` with one key added, ``measured``: when, with which command, on what machine
(Python, platform, cores, the load average as the run began: the machine may be shared).
The pages' tables are generated from these files when the site is built
(``docs/hooks/generated.py``); nothing on those pages is typed by hand.

    python scripts/docs_evidence.py bench      # python -m bench --quick --json ...
    python scripts/docs_evidence.py bench --full
    python scripts/docs_evidence.py eval       # execgraph eval (--quick with --quick)
    python scripts/docs_evidence.py matrix     # the fault-injection matrix
    python scripts/docs_evidence.py torture    # crash-resume torture, both workloads
    python scripts/docs_evidence.py agentdojo  # execgraph eval --suite agentdojo

Run from the repository's root with its virtual environment's Python.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "docs" / "data"
sys.path.insert(0, str(ROOT))  # the reliability harnesses live in the tests package


def _measured(command: str, started: datetime.datetime, load: tuple[float, ...]) -> dict[str, Any]:
    return {
        "command": command,
        "date": started.date().isoformat(),
        "wall_s": round((datetime.datetime.now(datetime.UTC) - started).total_seconds(), 1),
        "python": platform.python_version(),
        "platform": platform.system() + " " + platform.machine(),
        "cores": os.cpu_count(),
        "load_average_at_start": [round(x, 2) for x in load],
    }


def _write(name: str, data: dict[str, Any]) -> Path:
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / name
    path.write_text(json.dumps(data, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}")
    return path


def _start() -> tuple[datetime.datetime, tuple[float, ...]]:
    return datetime.datetime.now(datetime.UTC), os.getloadavg()


def bench(full: bool) -> None:
    """``python -m bench [--quick] --json``: performance and Temporal throughput."""
    started, load = _start()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.json"
        args = [] if full else ["--quick"]
        subprocess.run([sys.executable, "-m", "bench", *args, "--json", str(out)], cwd=ROOT)
        if not out.exists():
            raise SystemExit("the bench wrote no JSON")
        data = json.loads(out.read_text(encoding="utf-8"))
    command = "python -m bench" + ("" if full else " --quick")
    _write("bench.json", {"measured": _measured(command, started, load), **data})


def trim_eval(data: dict[str, Any]) -> dict[str, Any]:
    """``eval.json`` without each run's own record: the pages show the summaries, and the
    per-run records of a full evaluation are megabytes. What is kept of them is their
    count (``runs``) and the runs that failed (``error_cells``); ``groups`` (each seed's
    metrics, from which the intervals come) and the summaries are kept whole."""
    cells = data.get("cells", [])
    trimmed = {k: v for k, v in data.items() if k != "cells"}
    trimmed["runs"] = len(cells)
    trimmed["error_cells"] = [c for c in cells if c.get("error_type")]
    trimmed["timing"] = {k: v for k, v in data.get("timing", {}).items() if k != "cells"}
    return trimmed


def evaluation(quick: bool) -> None:
    """``execgraph eval [--quick]``: the evaluation's ``eval.json`` (:func:`trim_eval`)."""
    started, load = _start()
    with tempfile.TemporaryDirectory() as tmp:
        cli = shutil.which("execgraph", path=str(Path(sys.executable).parent)) or "execgraph"
        args = ["--quick"] if quick else []
        subprocess.run([cli, "eval", *args, "--out", tmp], cwd=ROOT, check=True)
        data = json.loads((Path(tmp) / "eval.json").read_text(encoding="utf-8"))
    command = "execgraph eval" + (" --quick" if quick else "")
    _write("eval.json", {"measured": _measured(command, started, load), **trim_eval(data)})


def trim_agentdojo(data: dict[str, Any]) -> dict[str, Any]:
    """``agentdojo.json`` without each run's record, but with every lost task and every
    successful attack named per configuration (each explained on the page)."""
    return {k: v for k, v in data.items() if k != "results"}


def agentdojo() -> None:
    """``execgraph eval --suite agentdojo``: every pair under every configuration."""
    started, load = _start()
    cli = str(Path(sys.executable).with_name("execgraph"))
    with tempfile.TemporaryDirectory() as tmp:
        args = ["eval", "--suite", "agentdojo", "--out", tmp]
        subprocess.run([cli, *args], cwd=ROOT, check=True)
        data = json.loads((Path(tmp) / "agentdojo.json").read_text(encoding="utf-8"))
    command = "execgraph eval --suite agentdojo"
    _write(
        "agentdojo.json", {"measured": _measured(command, started, load), **trim_agentdojo(data)}
    )


def matrix() -> None:
    """Every fault under every architecture, with each cell's invariants checked."""
    from tests.reliability.matrix import ARCHS, FAULTS, run_all

    started, load = _start()
    reports = run_all(FAULTS[f](a) for f in FAULTS for a in ARCHS)
    cells = [
        {
            "fault": r.fault,
            "arch": r.arch,
            "passed": r.ok,
            "status": r.status,
            "problems": r.problems,
            "unauthorized": r.unauthorized,
        }
        for r in reports
    ]
    command = "python -m tests.reliability.matrix"
    _write("fault-matrix.json", {"measured": _measured(command, started, load), "cells": cells})


def torture(trials: int) -> None:
    """Workers SIGKILLed at random points and resumed in new processes, per workload."""
    from tests.reliability.torture import parse_args, run_trials

    started, load = _start()
    runs = []
    for workload in ("demo", "ledger"):
        opts = parse_args(["--trials", str(trials), "--workload", workload])
        with tempfile.TemporaryDirectory(prefix="torture-") as tmp:
            root = Path(tmp) / workload
            root.mkdir()
            summary = run_trials(opts, root)
        totals = {
            name: summary.total(name)
            for name in (
                "attempts",
                "kills",
                "duplicates",
                "lost_commits",
                "orphans",
                "unknown_left",
                "leaked_locks",
                "stalled",
            )
        }
        runs.append(
            {
                "workload": workload,
                "arch": opts.arch,
                "trials": len(summary.trials),
                **totals,
                "statuses": dict(summary.statuses()),
            }
        )
    command = f"python -m tests.reliability.torture --trials {trials} --workload demo|ledger"
    _write("torture.json", {"measured": _measured(command, started, load), "runs": runs})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/docs_evidence.py", description=__doc__)
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("bench").add_argument("--full", action="store_true", help="not --quick")
    sub.add_parser("eval").add_argument("--quick", action="store_true", help="the CI subset")
    sub.add_parser("matrix")
    sub.add_parser("agentdojo")
    sub.add_parser("torture").add_argument("--trials", type=int, default=40)
    opts = parser.parse_args(argv)
    if opts.what == "bench":
        bench(opts.full)
    elif opts.what == "eval":
        evaluation(opts.quick)
    elif opts.what == "matrix":
        matrix()
    elif opts.what == "agentdojo":
        agentdojo()
    else:
        torture(opts.trials)
    return 0


if __name__ == "__main__":
    sys.exit(main())
