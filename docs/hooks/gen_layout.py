"""The package's layout and its layers, read from the tree and from ``pyproject.toml``.

The folders of ``execgraph/`` are listed with the first line of each one's ``__init__``
docstring (or, for a module, its own docstring), and the layers with the contract
import-linter checks in ``make test``: the page shows the layout the code has, not one
written down once.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

__all__ = ["layers", "packages"]


def _first_line(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    if not doc:
        return ""
    return " ".join(doc.strip().split("\n\n")[0].split()).replace("``", "`").replace("|", "\\|")


def packages(root: Path, package: str = "execgraph") -> str:
    """A table of the package's sub-packages and top-level modules, with their docstrings."""
    base = root / package
    rows = ["| module | what it holds |", "|---|---|"]
    entries = sorted(
        p
        for p in base.iterdir()
        if (p.is_dir() and (p / "__init__.py").exists())
        or (p.suffix == ".py" and p.name != "__init__.py")
    )
    for path in entries:
        source = path / "__init__.py" if path.is_dir() else path
        name = f"{package}.{path.stem}" + ("/" if path.is_dir() else "")
        rows.append(f"| `{name}` | {_first_line(source)} |")
    return "\n".join(rows) + "\n"


def layers(root: Path) -> str:
    """Each ``layers`` contract of import-linter, highest layer first."""
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    lines: list[str] = []
    for contract in contracts:
        if contract.get("type") != "layers":
            continue
        lines += [f"Contract: *{contract['name']}*", ""]
        for number, layer in enumerate(contract["layers"], start=1):
            names = " · ".join(f"`{n.strip()}`" for n in layer.split("|"))
            lines.append(f"{number}. {names}")
        lines.append("")
    if not lines:
        raise KeyError("pyproject.toml has no import-linter layers contract")
    others = [c["name"] for c in contracts if c.get("type") != "layers"]
    if others:
        lines += ["Also checked: " + "; ".join(f"*{n}*" for n in others) + ".", ""]
    return "\n".join(lines)
