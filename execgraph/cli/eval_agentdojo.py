"""``execgraph eval --suite agentdojo``: the AgentDojo benchmark, with a progress bar.

Writes ``agentdojo.json`` and ``agentdojo.md`` under ``--out`` and prints the tables;
``--quick`` runs a fixed sample of pairs.
"""

from __future__ import annotations

from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from execgraph.cli.drive import out
from execgraph.cli.options import err
from execgraph.state.errors import UsageError

__all__ = ["run_agentdojo"]


def run_agentdojo(
    *, quick: bool, configs: tuple[str, ...], suites: tuple[str, ...], target: Path
) -> int:
    """Run the benchmark and print its tables; exit 0 (the figures are the result)."""
    try:
        from execgraph.eval.agentdojo import configurations, run_benchmark, write_report
        from execgraph.eval.agentdojo.benchmark import SUITES
    except ImportError as exc:
        raise UsageError(str(exc)) from None
    unknown = [s for s in suites if s not in SUITES]
    if unknown:
        raise UsageError(
            f"unknown AgentDojo suite {', '.join(unknown)}; choose from {', '.join(SUITES)}"
        )
    chosen = configurations(configs)
    bar = Progress(
        TextColumn("[bold]agentdojo"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[errors]} errors"),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    )
    with bar:
        job = bar.add_task("agentdojo", total=None, errors=0)
        errors = 0

        def advance(done: int, total: int, result: object) -> None:
            nonlocal errors
            errors += 1 if getattr(result, "error", None) else 0
            bar.update(job, completed=done, total=total, errors=errors)

        report = run_benchmark(chosen, suites=suites or SUITES, quick=quick, progress=advance)
    written = write_report(report, target)
    out.print(
        written["markdown"].read_text(encoding="utf-8"),
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    for path in written.values():
        out.print(Text(f"wrote {path}", style="dim"), soft_wrap=True)
    err.print(Text(f"{len(report.results)} runs in {report.wall_s:.0f} s", style="dim"))
    return 0
