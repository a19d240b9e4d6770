"""The printed table (rich) and the JSON file."""

from __future__ import annotations

import json
import platform
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.core import Row

__all__ = ["print_table", "write_json"]

_STYLE = {"PASS": "bold green", "MISS": "bold red"}


def _num(value: float | None) -> str:
    if value is None:
        return "—"
    if value == 0 or abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    if abs(value) >= 0.1:
        return f"{value:.2f}"
    return f"{value:.4f}"


def print_table(rows: list[Row], console: Console | None = None) -> None:
    """Ratios with targets, then the absolute figures behind them."""
    console = console or Console(width=220)
    table = Table(title="execgraph vs LangGraph (ratio = execgraph ÷ baseline)", show_lines=False)
    for name, justify in (
        ("measure", "left"),
        ("case", "left"),
        ("baseline", "left"),
        ("execgraph", "right"),
        ("baseline value", "right"),
        ("unit", "left"),
        ("ratio", "right"),
        ("target", "left"),
        ("verdict", "center"),
        ("note", "left"),
    ):
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for row in rows:
        verdict = row.verdict
        table.add_row(
            row.section,
            row.metric,
            row.baseline,
            _num(row.ours),
            _num(row.base),
            row.unit,
            f"{row.ratio:.2f}x" if row.ratio is not None else "—",
            row.target.text if row.target else "",
            f"[{_STYLE[verdict]}]{verdict}[/]" if verdict in _STYLE else verdict,
            row.note,
        )
    console.print(table)
    checked = [r for r in rows if r.target is not None]
    passed = sum(r.verdict == "PASS" for r in checked)
    console.print(f"targets met: {passed}/{len(checked)}")


def write_json(rows: list[Row], extras: dict[str, Any], path: Path) -> None:
    """Rows, raw figures and the machine, as JSON."""
    data = {
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "rows": [r.as_dict() for r in rows],
        "raw": extras,
    }
    path.write_text(json.dumps(data, indent=2, default=str))
