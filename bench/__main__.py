"""``python -m bench``: run the measurements and print ratios against LangGraph."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
import time
import warnings
from pathlib import Path

from rich.console import Console

from bench import MEASUREMENTS
from bench.core import Bench, Row
from bench.report import print_table, write_json


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="10/100 steps, small parallel")
    parser.add_argument(
        "--only",
        action="append",
        choices=MEASUREMENTS,
        metavar="NAME",
        help=f"run only this measurement (repeatable): {', '.join(MEASUREMENTS)}",
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the results as JSON")
    parser.add_argument(
        "--steps",
        type=lambda s: tuple(int(x) for x in s.split(",")),
        metavar="N[,N...]",
        help="step counts instead of 10,100,1000 (the largest is the long run)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temp directory")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run, print, optionally write JSON; exit 0 when targets are missed, 1 on errors."""
    opts = _parse(argv)
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    console = Console(width=220, stderr=False)
    bench = Bench(quick=opts.quick, log=lambda m: console.print(m, highlight=False))
    if opts.steps:
        bench.step_counts = tuple(sorted(set(opts.steps)))
        bench.long_steps = max(bench.step_counts)
    names = [n for n in MEASUREMENTS if not opts.only or n in opts.only]
    console.print(f"bench: {', '.join(names)}; steps {bench.step_counts}; dir {bench.root}")
    rows: list[Row] = []
    failed: list[str] = []
    start = time.perf_counter()
    try:
        for name in names:
            began = time.perf_counter()
            module = importlib.import_module(f"bench.{name}")
            try:
                rows.extend(module.measure(bench))
            except Exception as exc:  # one broken measurement must not hide the others
                console.print_exception(max_frames=8)
                failed.append(name)
                rows.append(Row(name, "failed", None, None, "", "", None, f"{exc!r}"[:300]))
            console.print(f"[dim]{name} took {time.perf_counter() - began:.1f} s[/]")
    finally:
        if not opts.keep:
            bench.cleanup()
    console.print(f"total {time.perf_counter() - start:.1f} s")
    print_table(rows, console)
    if opts.json:
        write_json(rows, bench.extras, opts.json)
        console.print(f"wrote {opts.json}")
    if failed:
        console.print(f"[bold red]measurements that failed: {', '.join(failed)}[/]")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
